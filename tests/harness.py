"""Runs the real app over HTTP against the fake servers — the very WSGI application gunicorn serves,
on a threaded stdlib server in this process — and sends it requests signed exactly as Slack signs
them, in Slack's payload shapes."""
from __future__ import annotations

import hashlib
import hmac
import itertools
import json
import socketserver
import threading
import time
import urllib.error
import urllib.parse
import urllib.request
from dataclasses import dataclass
from wsgiref.simple_server import WSGIRequestHandler, WSGIServer

from bot.app import build
from bot.config import load_settings
from bot.domain.model import Channel
from bot.wsgi import HttpApp

from .fakes.anthropic_api import FakeAnthropic
from .fakes.clock import FakeClock
from .fakes.slack_api import BOT_USER_ID, TEAM_ID, FakeSlack

SIGNING_SECRET = "test-signing-secret-not-real"
BOT_TOKEN = "xoxb-test-token-not-real"
API_KEY = "sk-ant-test-key-not-real"
APP_ID = "A0THREADFORK"
CHANNEL = "C0GENERAL01"
GENERAL = Channel(TEAM_ID, CHANNEL)  # the test channel as the store keys it


@dataclass
class Reply:
    status: int
    body: str


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


class _ThreadedWSGIServer(socketserver.ThreadingMixIn, WSGIServer):
    daemon_threads = True  # a request still open never holds up a test's teardown
    request_queue_size = 128  # the tests' bursts of concurrent deliveries


class _QuietHandler(WSGIRequestHandler):
    def log_message(self, *args) -> None:  # like gunicorn here: no access log
        pass


class RunningBot:
    def __init__(self, slack: FakeSlack, claude: FakeAnthropic, database_url: str, clock=None, **settings):
        self.slack = slack
        self.claude = claude
        self.settings = load_settings(
            _env_file=None, slack_bot_token=BOT_TOKEN, slack_signing_secret=SIGNING_SECRET,
            anthropic_api_key=API_KEY, slack_api_url=slack.api_url, anthropic_base_url=claude.url,
            database_url=database_url, port=0, **settings,
        )
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
        self._ids = itertools.count(1)
        self._ts = itertools.count(1)

    def stop(self) -> None:
        self.server.shutdown()
        self.server.server_close()
        self.thread.join(timeout=5)
        self.wiring.executor.shutdown(wait=True, cancel_futures=False)
        self.db.engine.dispose()

    # raw HTTP ---------------------------------------------------------------------------

    def post(self, body: bytes, content_type: str, headers: dict | None = None, signed: bool = True) -> Reply:
        all_headers = {"Content-Type": content_type, **(sign(body) if signed else {}), **(headers or {})}
        request = urllib.request.Request(self.url + "/slack/events", data=body, headers=all_headers, method="POST")
        try:
            with urllib.request.urlopen(request, timeout=10) as response:
                return Reply(response.status, response.read().decode())
        except urllib.error.HTTPError as error:
            return Reply(error.code, error.read().decode())

    def get(self, path: str) -> Reply:
        try:
            with urllib.request.urlopen(self.url + path, timeout=10) as response:
                return Reply(response.status, response.read().decode())
        except urllib.error.HTTPError as error:
            return Reply(error.code, error.read().decode())

    # Slack payloads ---------------------------------------------------------------------

    def new_ts(self) -> str:
        n = next(self._ts)
        return f"{1_700_000_000 + n}.{n:06d}"

    def event(self, event: dict, event_id: str | None = None, headers: dict | None = None) -> Reply:
        envelope = {
            "token": "legacy-verification-unused", "team_id": TEAM_ID, "api_app_id": APP_ID,
            "event": event, "type": "event_callback", "event_id": event_id or f"Ev{next(self._ids):08d}",
            "event_time": int(time.time()), "is_ext_shared_channel": False,
            "authorizations": [{"enterprise_id": None, "team_id": TEAM_ID, "user_id": BOT_USER_ID,
                                "is_bot": True, "is_enterprise_install": False}],
        }
        return self.post(json.dumps(envelope).encode(), "application/json", headers)

    def say(self, user: str, text: str, *, channel: str = CHANNEL, thread_ts: str | None = None,
            mention: bool = False, channel_type: str = "channel", files: list[dict] | None = None) -> str:
        """A person posts a message (with `files`, as `slack.share_file` describes them); with a mention
        Slack delivers it as `message` and `app_mention`."""
        return self.said(user, text, channel=channel, thread_ts=thread_ts, mention=mention,
                         channel_type=channel_type, files=files)["ts"]

    def said(self, user: str, text: str, *, channel: str = CHANNEL, thread_ts: str | None = None,
             mention: bool = False, channel_type: str = "channel", files: list[dict] | None = None) -> dict:
        """`say`, returning the message event as Slack sent it."""
        ts = self.new_ts()
        if mention:
            text = f"<@{BOT_USER_ID}> {text}"
        message = {"type": "message", "channel": channel, "user": user, "text": text, "ts": ts,
                   "event_ts": ts, "channel_type": channel_type, "team": TEAM_ID}
        if files:
            message.update(subtype="file_share", files=files, upload=False)
        if thread_ts:
            message["thread_ts"] = thread_ts
        assert self.event(message).status == 200
        if mention:
            mention_event = {"type": "app_mention", "channel": channel, "user": user, "text": text, "ts": ts,
                             "event_ts": ts, "team": TEAM_ID, **({"thread_ts": thread_ts} if thread_ts else {}),
                             **({"files": files} if files else {})}
            assert self.event(mention_event).status == 200
        return message

    def react(self, user: str, ts: str, reaction: str = "white_check_mark", channel: str = CHANNEL,
              event_id: str | None = None) -> Reply:
        event = {"type": "reaction_added", "user": user, "reaction": reaction,
                 "item": {"type": "message", "channel": channel, "ts": ts},
                 "item_user": BOT_USER_ID, "event_ts": self.new_ts()}
        return self.event(event, event_id=event_id)

    def slash(self, command: str, text: str = "", *, user: str = "UALICE01", channel: str = CHANNEL) -> Reply:
        form = {
            "token": "legacy-verification-unused", "team_id": TEAM_ID, "team_domain": "fake",
            "channel_id": channel, "channel_name": "general", "user_id": user, "user_name": user.lower(),
            "command": command, "text": text, "api_app_id": APP_ID, "is_enterprise_install": "false",
            "response_url": self.slack.response_url(f"{command.strip('/')}-{next(self._ids)}"),
            "trigger_id": f"{next(self._ids)}.trigger",
        }
        return self.post(urllib.parse.urlencode(form).encode(), "application/x-www-form-urlencoded")

    def click(self, action_id: str, value: str, *, user: str = "UALICE01", channel: str = CHANNEL,
              message_ts: str = "1.0") -> Reply:
        payload = {
            "type": "block_actions", "user": {"id": user, "username": user.lower(), "team_id": TEAM_ID},
            "api_app_id": APP_ID, "token": "legacy-verification-unused",
            "container": {"type": "message", "message_ts": message_ts, "channel_id": channel, "is_ephemeral": False},
            "trigger_id": f"{next(self._ids)}.trigger", "team": {"id": TEAM_ID, "domain": "fake"},
            "channel": {"id": channel, "name": "general"}, "message": {"type": "message", "ts": message_ts},
            "response_url": self.slack.response_url(f"action-{next(self._ids)}"),
            "actions": [{"action_id": action_id, "block_id": "fork", "value": value, "type": "button",
                         "text": {"type": "plain_text", "text": action_id}, "action_ts": str(time.time())}],
        }
        body = urllib.parse.urlencode({"payload": json.dumps(payload)}).encode()
        return self.post(body, "application/x-www-form-urlencoded")

    # waiting ----------------------------------------------------------------------------

    def busy(self) -> bool:
        return answering(self.db.engine)

    def quiesce(self, quiet: float = 0.3, timeout: float = 15.0) -> None:
        """Wait until no answer is in progress and neither fake has seen a call for `quiet` seconds."""
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
