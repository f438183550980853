"""The bot's Slack clients (bot/slack/clients.py: slack-sdk over urllib3's pool) against the fake Slack, over
http and HTTPS: calls reuse kept-alive connections, a connection Slack closed while idle is replaced without
losing or doubling a call, failures reach slack-sdk's retry handlers, a proxy in the environment is used —
and the seam: the private methods clients.py replaces are still the ones slack-sdk sends through."""
import inspect

import pytest
from slack_sdk import WebClient
from slack_sdk.errors import SlackApiError
from slack_sdk.webhook import WebhookClient

from bot.slack.clients import web_client
from bot.slack.clients import PooledWebhookClient, connection_pool
from bot.slack.clients import FAILURES, retry_handlers
from bot.infrastructure.tls import tls_context

from ..fakes.slack_api import BOT_TOKEN, FakeSlack
from ..fakes.tls import write_authority
from ..harness import wait_until

CHANNEL = "C0TRANSP1"


@pytest.fixture(params=["http", "https"])
def slack(request, tmp_path, monkeypatch):
    if request.param == "https":
        monkeypatch.setenv("SSL_CERT_FILE", str(write_authority(tmp_path)))
    fake = FakeSlack(bot_token=BOT_TOKEN, tls=request.param == "https").start()
    yield fake
    fake.stop()
    assert not fake.violations


@pytest.fixture
def pool():
    return connection_pool(tls_context())


@pytest.fixture
def client(slack, pool):
    return web_client(BOT_TOKEN, slack.api_url, pool)


def test_the_seam_slack_sdk_sends_every_request_through_the_methods_clients_py_replaces():
    for cls, name in ((WebClient, "_perform_urllib_http_request_internal"),
                      (WebhookClient, "_perform_http_request_internal")):
        assert list(inspect.signature(getattr(cls, name)).parameters) == ["self", "url", "req"], (cls, name)
        assert f"self.{name}(" in inspect.getsource(cls.__mro__[1] if cls is WebClient else cls), (cls, name)


def test_calls_one_after_another_reuse_one_connection(slack, client):
    opened = slack.server.connections_opened
    for n in range(20):  # a channel each: chat.postMessage takes about one a second per channel (a 429 is retried)
        assert client.chat_postMessage(channel=f"{CHANNEL}{n:02d}", text=f"message {n}")["ok"]
    assert slack.server.connections_opened - opened == 1
    assert len(slack.calls_to("chat.postMessage")) == 20


def test_a_connection_slack_closed_while_idle_is_replaced_and_the_call_made_once(slack, client):
    client.chat_postMessage(channel=CHANNEL, text="first")
    opened = slack.server.connections_opened
    slack.server.hang_up()
    wait_until(lambda: not slack.server.httpd.open_sockets, message="the fake to let the connection go")
    assert client.chat_postMessage(channel=CHANNEL, text="second")["ok"]
    assert slack.server.connections_opened - opened == 1
    assert [c.args["text"] for c in slack.calls_to("chat.postMessage")] == ["first", "second"]


def test_a_refusal_and_a_server_error_reach_the_caller_as_slack_api_errors(slack, client):
    slack.fail("chat.update", "message_not_found")
    with pytest.raises(SlackApiError) as refused:
        client.chat_update(channel=CHANNEL, ts="1.000001", text="x")
    assert refused.value.response["error"] == "message_not_found"
    slack.fail("chat.postMessage", status=503, times=3)  # beyond the two retries
    with pytest.raises(SlackApiError) as failed:
        client.chat_postMessage(channel=CHANNEL, text="x")
    assert failed.value.response.status_code == 503
    assert len(slack.calls_to("chat.postMessage")) == 3


def test_a_server_error_and_a_reset_connection_are_retried_by_slack_sdks_handlers(slack, client):
    slack.fail("chat.postMessage", status=500)
    assert client.chat_postMessage(channel=CHANNEL, text="after a 500")["ok"]
    slack.fail("reactions.add", drop=True)  # the connection is reset before any answer
    assert client.reactions_add(channel=CHANNEL, timestamp="1.000001", name="eyes")["ok"]
    assert len(slack.calls_to("chat.postMessage")) == 2 and len(slack.calls_to("reactions.add")) == 2


def test_an_append_lost_with_its_connection_is_not_repeated(slack, client):
    slack.fail("chat.appendStream", drop=True, applied=True)
    with pytest.raises(FAILURES):
        client.chat_appendStream(channel=CHANNEL, ts="1.000001", markdown_text="once")
    assert len(slack.calls_to("chat.appendStream")) == 1


def test_a_rate_limited_call_carries_retry_after_as_slack_sends_it(slack, client):
    client.retry_handlers = []  # the bot waits these out; here the answer itself is what is checked
    slack.fail("chat.startStream", "ratelimited", status=429, retry_after=7)
    with pytest.raises(SlackApiError) as limited:
        client.chat_startStream(channel=CHANNEL, thread_ts="1.000001")
    assert limited.value.response.status_code == 429
    assert limited.value.response.headers["Retry-After"] == "7"


def test_nothing_listening_is_a_failure_the_bot_names(pool):
    dead = web_client(BOT_TOKEN, "http://127.0.0.1:9/api/", pool)
    dead.retry_handlers = []
    with pytest.raises(FAILURES):
        dead.api_call("auth.test")


def test_response_urls_are_answered_on_the_same_kept_alive_connections(slack, pool):
    opened = slack.server.connections_opened
    for n in range(5):
        webhook = PooledWebhookClient(slack.response_url(f"r{n}"), retry_handlers=retry_handlers(), pool=pool)
        assert webhook.send(text=f"answer {n}", response_type="ephemeral").status_code == 200
    assert slack.server.connections_opened - opened == 1
    assert [r["text"] for r in slack.responses] == [f"answer {n}" for n in range(5)]


def test_a_proxy_named_in_the_environment_is_used(pool, monkeypatch):
    slack = FakeSlack(bot_token=BOT_TOKEN).start()
    proxy = FakeSlack(bot_token=BOT_TOKEN).start()  # stands in for the proxy: it reads the path of the full URL
    try:
        monkeypatch.setenv("HTTP_PROXY", proxy.server.url)
        client = web_client(BOT_TOKEN, slack.api_url, pool)
        assert client.auth_test()["ok"]
        assert proxy.calls_to("auth.test") and proxy.server.connections_opened == 1 and slack.server.connections_opened == 0
    finally:
        slack.stop()
        proxy.stop()
