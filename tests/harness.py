"""Runs the real app over HTTP against the fake servers — the very WSGI application gunicorn serves,
on a threaded stdlib server in this process — and sends it requests signed exactly as Slack signs
them, in Slack's payload shapes (fakes/slack_actor.py: events, messages, slash commands, clicks,
shortcuts, modal submissions, uninstalls, the OAuth install), for any team the fake Slack serves."""
from __future__ import annotations

import hashlib
import hmac
import json
import socketserver
import threading
import time
import urllib.error
import urllib.request
from dataclasses import dataclass, field
from wsgiref.simple_server import WSGIRequestHandler, WSGIServer

from bot.app import build
from bot.config import load_settings
from bot.domain.model import Channel
from bot.entrypoints.wsgi import HttpApp

from .fakes.anthropic_api import FakeAnthropic
from .fakes.clock import FakeClock
from .fakes.slack_actor import CHANNEL, SlackActor
from .fakes.slack_api import APP_ID, BOT_TOKEN, BOT_USER_ID, CLIENT_ID, CLIENT_SECRET, TEAM_ID, FakeSlack

__all__ = ["API_KEY", "APP_ID", "BOT_TOKEN", "BOT_USER_ID", "CHANNEL", "CLIENT_ID", "CLIENT_SECRET", "GENERAL",
           "SIGNING_SECRET", "TEAM_ID", "Reply", "RunningBot", "answering", "at_once", "at_rest", "sign", "wait_until"]

SIGNING_SECRET = "test-signing-secret-not-real"
API_KEY = "sk-ant-test-key-not-real"
GENERAL = Channel(TEAM_ID, CHANNEL)  # the test channel as the store keys it


@dataclass
class Reply:
    status: int
    body: str
    headers: dict = field(default_factory=dict)

    def json(self):
        return json.loads(self.body) if self.body.strip() else None


def wait_until(predicate, timeout: float = 10.0, interval: float = 0.02, message: str = "condition"):
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        value = predicate()
        if value:
            return value
        time.sleep(interval)
    raise AssertionError(f"timed out waiting for {message}")


def at_once(*actions) -> None:
    """Run the actions concurrently, as Slack deliveries racing each other would."""
    threads = [threading.Thread(target=action) for action in actions]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()


def sign(body: bytes, secret: str = SIGNING_SECRET, timestamp: int | None = None) -> dict:
    timestamp = int(time.time()) if timestamp is None else timestamp
    base = b"v0:" + str(timestamp).encode() + b":" + body
    signature = "v0=" + hmac.new(secret.encode(), base, hashlib.sha256).hexdigest()
    return {"X-Slack-Request-Timestamp": str(timestamp), "X-Slack-Signature": signature}


def answering(engine) -> bool:
    """Some answer is still being written or waiting (read straight from the bot's database)."""
    with engine.connect() as conn:
        return bool(conn.exec_driver_sql(
            "SELECT COUNT(*) FROM turns WHERE status IN ('pending', 'streaming')").scalar())


def at_rest(engine) -> bool:
    """For bots in other processes, read straight from their database: every delivery kept in the inbox is
    done (its listener returned, first time or in a sweep's replay), no answer is in progress and no merge
    is claimed. Deliveries the bots ignore on purpose are never kept: this says nothing about those."""
    with engine.connect() as conn:
        return not answering(engine) and not conn.exec_driver_sql(
            "SELECT (SELECT COUNT(*) FROM inbox WHERE done_at IS NULL)"
            " + (SELECT COUNT(*) FROM sessions WHERE merge_owner IS NOT NULL)").scalar()


class _ThreadedWSGIServer(socketserver.ThreadingMixIn, WSGIServer):
    daemon_threads = True  # a request still open never holds up a test's teardown
    request_queue_size = 128  # the tests' bursts of concurrent deliveries


class _QuietHandler(WSGIRequestHandler):
    def log_message(self, *args) -> None:  # like gunicorn here: no access log
        pass


class RunningBot(SlackActor):
    def __init__(self, slack: FakeSlack, claude: FakeAnthropic, database_url: str, clock=None, **settings):
        """`settings` override the defaults (the default team's bot token, the test secrets, the fakes' URLs)."""
        self.slack = slack
        self.claude = claude
        defaults = dict(slack_bot_token=BOT_TOKEN, slack_signing_secret=SIGNING_SECRET, anthropic_api_key=API_KEY,
                        slack_api_url=slack.api_url, anthropic_base_url=claude.url, database_url=database_url, port=0)
        self.settings = load_settings(_env_file=None, **{**defaults, **settings})
        self.clock = clock or FakeClock()
        self.wiring = build(self.settings, clock=self.clock)
        self.services = self.wiring.services
        self.store = self.wiring.store
        self.db = self.wiring.db
        self.server = _ThreadedWSGIServer(("127.0.0.1", 0), _QuietHandler)
        self.server.set_app(HttpApp(self.wiring))
        self.thread = threading.Thread(target=self.server.serve_forever, kwargs={"poll_interval": 0.05},
                                       daemon=True)
        self.thread.start()
        self.url = f"http://127.0.0.1:{self.server.server_port}"

    def stop(self) -> None:
        self.server.shutdown()
        self.server.server_close()
        self.thread.join(timeout=5)
        self.wiring.executor.shutdown(wait=True, cancel_futures=False)
        self.wiring.scheduler.shutdown(wait=False)
        self.services.stopping.close()
        for calls in (self.wiring.watcher, *self.wiring.side_calls):
            calls.settle(5)
        self.db.engine.dispose()

    # raw HTTP ---------------------------------------------------------------------------

    def post(self, body: bytes, content_type: str, headers: dict | None = None, signed: bool = True) -> Reply:
        all_headers = {"Content-Type": content_type, **(sign(body) if signed else {}), **(headers or {})}
        request = urllib.request.Request(self.url + "/slack/events", data=body, headers=all_headers, method="POST")
        try:
            with urllib.request.urlopen(request, timeout=10) as response:
                return Reply(response.status, response.read().decode(), dict(response.headers))
        except urllib.error.HTTPError as error:
            return Reply(error.code, error.read().decode(), dict(error.headers))

    def get(self, path: str) -> Reply:
        try:
            with urllib.request.urlopen(self.url + path, timeout=10) as response:
                return Reply(response.status, response.read().decode(), dict(response.headers))
        except urllib.error.HTTPError as error:
            return Reply(error.code, error.read().decode(), dict(error.headers))

    # waiting ----------------------------------------------------------------------------

    def busy(self) -> bool:
        return answering(self.db.engine)

    def settled(self, timeout: float = 15.0) -> None:
        """Wait until the bot is done with every delivery it was sent and no answer is in progress — the
        signal before checking that nothing more happened.

        Bolt hands a delivery's listener to the bot's listener pool before Slack gets its ack, so once a
        request has been answered, an empty pool means its listener has returned: a kept delivery is then
        marked done in the inbox (or failed, for a sweep to replay), one the bot ignores on purpose (chatter,
        never kept) has been ignored. Answers are written inside the listener of the delivery that holds the
        session's lease; replays by `services.sweep()` go through the same pool. Not covered: the thinking
        reaction's Slack calls, on their own small pool (slack/reply.py: Reactions, made in bot/app.py) — wait for those calls."""
        wait_until(lambda: not self.wiring.executor.in_flight() and not self.busy(), timeout=timeout,
                   message="every delivery to be processed and no answer in progress")

    def quiesce(self, quiet: float = 0.3, timeout: float = 15.0) -> None:
        """Wait until no answer is in progress and neither fake has seen a call for `quiet` seconds: for
        absences no signal of the bot's covers (prefer `settled`)."""
        wait_until(lambda: not self.busy(), timeout=timeout, message="answers to finish")
        deadline = time.monotonic() + timeout
        last = (-1, -1, -1)
        since = time.monotonic()
        while time.monotonic() < deadline:
            now = (len(self.slack.calls), len(self.claude.requests), len(self.slack.responses))
            if now != last:
                last, since = now, time.monotonic()
            elif time.monotonic() - since >= quiet:
                return
            time.sleep(0.02)
        raise AssertionError("the bot never went quiet")

    def fork_root(self, number: int = 1, channel: str = CHANNEL) -> str:
        fork = wait_until(lambda: self.store.sessions.fork_by_number(Channel(TEAM_ID, channel), number),
                          message=f"fork #{number}")
        return wait_until(lambda: self.store.sessions.fork(fork.id).root_ts, message="fork root")
