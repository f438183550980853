"""The bot's Slack client (bot/slack/transport.py) against the fake Slack: calls reuse kept-alive
connections, a connection Slack closed while idle is replaced without losing or doubling a call, and
failures reach slack-sdk (and its retry handlers) as urllib's would."""
import pytest
from slack_sdk.errors import SlackApiError

from bot.slack.clients import web_client
from bot.slack.transport import connection_pool

from ..fakes.slack_api import BOT_TOKEN
from ..harness import wait_until

CHANNEL = "C0TRANSP1"


@pytest.fixture
def client(slack):
    return web_client(BOT_TOKEN, slack.api_url, connection_pool())


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


def test_a_rate_limited_call_carries_retry_after_as_slack_sends_it(slack):
    client = web_client(BOT_TOKEN, slack.api_url, connection_pool())
    client.retry_handlers = []  # the bot waits these out; here the answer itself is what is checked
    slack.fail("chat.startStream", "ratelimited", status=429, retry_after=7)
    with pytest.raises(SlackApiError) as limited:
        client.chat_startStream(channel=CHANNEL, thread_ts="1.000001")
    assert limited.value.response.status_code == 429
    assert limited.value.response.headers["Retry-After"] == "7"


def test_nothing_listens_is_a_url_error_as_urllib_raises_it(client):
    from urllib.error import URLError
    dead = web_client(BOT_TOKEN, "http://127.0.0.1:9/api/", connection_pool())
    dead.retry_handlers = []
    with pytest.raises(URLError):
        dead.api_call("auth.test")


def test_response_urls_are_answered_on_the_same_kept_alive_connections(slack):
    from bot.slack.retries import retry_handlers
    from bot.slack.transport import PooledWebhookClient

    pool = connection_pool()
    opened = slack.server.connections_opened
    for n in range(5):
        webhook = PooledWebhookClient(slack.response_url(f"r{n}"), retry_handlers=retry_handlers(), pool=pool)
        assert webhook.send(text=f"answer {n}", response_type="ephemeral").status_code == 200
    assert slack.server.connections_opened - opened == 1
    assert [r["text"] for r in slack.responses] == [f"answer {n}" for n in range(5)]
