"""Over TLS, as in production: the fake Slack (Web API, response_urls, files, and Socket Mode's wss://) and the
fake Anthropic API (Messages and Files) serve HTTPS with a certificate authority the tests create
(fakes/tls.py), and the real `python -m bot` trusts it through SSL_CERT_FILE alone — the standard setting
Python's ssl module (slack-sdk) and httpx (the Anthropic SDK) read. Verification stays on: a bot that was
not told about the authority reaches neither service."""
import time
import urllib.error
import urllib.request

import pytest

from bot.llm.claude import Claude
from bot.domain.context import Block, ModelInput
from bot.domain.errors import ModelUnavailable
from bot.slack.clients import web_client
from bot.slack.clients import connection_pool
from bot.slack.clients import FAILURES
from bot.infrastructure.tls import tls_context

from ..fakes.anthropic_api import FakeAnthropic, Script, is_merge_request
from ..fakes.samples import png
from ..fakes.slack_actor import SlackActor
from ..fakes.slack_api import APP_TOKEN, BOT_TOKEN, FakeSlack
from ..fakes.socket_actor import SocketModeSlack
from ..fakes.socket_mode import serving
from ..fakes.tls import write_authority
from ..harness import API_KEY, CHANNEL, Reply, sign, wait_until
from ..processes import BotProcess

pytestmark = pytest.mark.timeout(120)

SLOW = Script(text=" ".join(f"word{n}" for n in range(120)), chunks=60, chunk_delay=0.1)  # ~6 s


@pytest.fixture
def slack():
    fake = FakeSlack(bot_token=BOT_TOKEN, tls=True).start()
    yield fake
    fake.stop()
    assert not fake.violations, f"calls Slack would reject: {fake.violations}"


@pytest.fixture
def claude():
    fake = FakeAnthropic(tls=True).start()
    yield fake
    fake.stop()
    assert not fake.rejections, f"requests the Messages API would refuse: {fake.rejections}"


@pytest.fixture
def socket_mode(slack):
    yield from serving(slack, tls=True)


class OverHttp(SlackActor):
    """Slack posting signed deliveries to a `python -m bot` process in HTTP mode."""

    def __init__(self, slack, process: BotProcess):
        self.slack, self.process, self.url = slack, process, process.url

    def post(self, body: bytes, content_type: str, headers: dict | None = None) -> Reply:
        request = urllib.request.Request(self.url + "/slack/events", data=body, method="POST",
                                         headers={"Content-Type": content_type, **sign(body), **(headers or {})})
        try:
            with urllib.request.urlopen(request, timeout=10) as response:
                return Reply(response.status, response.read().decode())
        except urllib.error.HTTPError as error:
            return Reply(error.code, error.read().decode())


def trusting(tmp_path) -> dict:
    return {"SSL_CERT_FILE": str(write_authority(tmp_path))}


def answers(slack, top_level=True):
    return [m for m in slack.posts(CHANNEL, top_level=top_level) if m.shown.startswith("Answer")]


def summaries(slack):
    return [p for p in slack.posts(CHANNEL, top_level=True) if "merged fork" in p.get("text", "")]


def mention_fork_turn_and_merge(people, slack, claude) -> None:
    image = slack.share_file("screenshot.png", png(40, 30), "image/png", "png")
    assert people.say("UALICE01", "what is on this screenshot?", mention=True, files=[image])
    wait_until(lambda: answers(slack), timeout=30, message="the mention answered")
    assert slack.downloads_of(image["id"])[0].served and len(claude.files.uploads) == 1  # files over HTTPS too
    assert people.slash("/fork", "pricing tiers").status == 200
    [root] = wait_until(lambda: [p for p in slack.posts(CHANNEL, top_level=True) if "Fork #1" in str(p["blocks"])],
                        message="the fork root")
    wait_until(lambda: answers(slack, top_level=False), message="the topic answered in the thread")
    people.say("UBOB0001", "constraint: under $20/month", thread_ts=root.ts)
    wait_until(lambda: len(answers(slack, top_level=False)) == 2, message="the fork turn answered")
    people.react("UCAROL01", root.ts)
    [summary] = wait_until(lambda: summaries(slack), message="the merge summary")
    assert "<@UCAROL01> merged fork #1" in summary["blocks"][0]["text"]["text"]
    assert len([r for r in claude.requests if is_merge_request(r)]) == 1


def test_tls_a_mention_a_fork_turn_and_a_merge_in_http_mode_with_slack_and_claude_over_https(
        tmp_path, slack, claude, migrated_sqlite_url):
    assert slack.api_url.startswith("https://") and claude.url.startswith("https://")
    process = BotProcess(tmp_path, slack, claude, migrated_sqlite_url, **trusting(tmp_path))
    try:
        process.wait_healthy()
        people = OverHttp(slack, process)
        mention_fork_turn_and_merge(people, slack, claude)
        # a response_url (https, Slack's own host) answered too
        people.shortcut("merge_this_fork", "1700000009.000001")
        [answer] = wait_until(lambda: slack.responses, message="the answer on the response_url")
        assert "fork's thread" in answer["text"]
    finally:
        log = process.stop()
    assert "CERTIFICATE_VERIFY_FAILED" not in log and API_KEY not in log


def test_tls_stop_closes_the_model_stream_over_https_within_a_second(tmp_path, slack, claude, migrated_sqlite_url):
    process = BotProcess(tmp_path, slack, claude, migrated_sqlite_url, **trusting(tmp_path))
    try:
        process.wait_healthy()
        people = OverHttp(slack, process)
        people.slash("/fork", "--fresh")
        [root] = wait_until(lambda: [p for p in slack.posts(CHANNEL, top_level=True) if "Fork #1" in str(p["blocks"])])
        claude.script(SLOW)
        people.say("UALICE01", "tell me everything", thread_ts=root.ts)
        wait_until(lambda: slack.calls_to("chat.appendStream"), timeout=30, message="words streaming")
        pressed = time.monotonic()
        assert people.press_stop("UBOB0001", root.ts).status == 200
        cancelled = wait_until(lambda: claude.cancelled.get(0), timeout=3, message="the model stream to close")
        assert cancelled.at - pressed < 1.0 and cancelled.deltas < 60
        wait_until(lambda: [m for m in slack.posts(CHANNEL, top_level=False) if "Stopped by" in m.shown],
                   message="the answer ended as stopped")
    finally:
        process.stop()


def test_tls_a_mention_a_fork_turn_and_a_merge_in_socket_mode_over_wss(
        tmp_path, slack, claude, socket_mode, migrated_sqlite_url):
    before = time.monotonic()
    process = BotProcess(tmp_path, slack, claude, migrated_sqlite_url, slack_app_token=APP_TOKEN,
                         **trusting(tmp_path))
    try:
        socket_mode.wait_connected(after=before, timeout=60)
        assert slack.calls_to("apps.connections.open") and socket_mode.ticket_url().startswith("wss://")
        mention_fork_turn_and_merge(SocketModeSlack(slack, socket_mode), slack, claude)
    finally:
        log = process.stop()
    assert "CERTIFICATE_VERIFY_FAILED" not in log and APP_TOKEN not in log


def test_tls_a_client_not_told_about_the_tests_authority_refuses_both_fakes(slack, claude, monkeypatch):
    monkeypatch.delenv("SSL_CERT_FILE", raising=False)
    monkeypatch.delenv("SSL_CERT_DIR", raising=False)
    client = web_client(BOT_TOKEN, slack.api_url, connection_pool(tls_context()))
    client.retry_handlers = []
    with pytest.raises(FAILURES, match="CERTIFICATE_VERIFY_FAILED"):
        client.auth_test()
    model = Claude(API_KEY, "claude-sonnet-4-5", base_url=claude.url, max_retries=0)
    with pytest.raises(ModelUnavailable, match="could not be reached"):
        model.complete(ModelInput("You are terse.", (Block("user", "hello", True),)))
    assert slack.calls == [] and claude.requests == []


def test_tls_the_same_clients_trusting_the_authority_through_ssl_cert_file_reach_both(slack, claude, tmp_path,
                                                                                      monkeypatch):
    monkeypatch.setenv("SSL_CERT_FILE", str(write_authority(tmp_path)))
    assert web_client(BOT_TOKEN, slack.api_url, connection_pool(tls_context())).auth_test()["ok"]
    claude.script(Script(text="over https"))
    model = Claude(API_KEY, "claude-sonnet-4-5", base_url=claude.url, max_retries=0)
    assert model.complete(ModelInput("You are terse.", (Block("user", "hello", True),))).text == "over https"
