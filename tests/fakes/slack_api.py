"""A fake Slack Web API: records every call, answers with realistic payloads, knows exactly the
methods Slack has and the arguments each requires (slack_spec/web_api_methods.json), and can be
told to fail.

Calls to a method Slack does not have, or lacking a required argument (or a token), are answered
`{"ok": false, ...}` as Slack would, and recorded in `violations`, which the test fixtures assert
to be empty. So is every payload Slack would refuse (block_kit.py): `blocks` and `view` are checked
with slack-sdk's Block Kit models and Slack's documented limits, texts against their length limits,
in Web API calls and in bodies posted to a `response_url` alike. A scripted failure may first do what was asked (`applied`: Slack did it, then
failed or lost the connection) and may answer with no HTTP response at all (`drop`: the connection is
reset).

It also serves files as Slack does (slack_files.py): `share_file` gives the file object a message
event carries, whose private URLs on this server need the bot's token, and `files.info` answers
from the same registry.
"""
from __future__ import annotations

import itertools
import json
import socket
import struct
import threading
import time
from dataclasses import dataclass, field
from pathlib import Path
from urllib.parse import parse_qsl, urlparse

from .block_kit import blocks_problems, text_problems, view_problems
from .http import BackgroundServer, QuietHandler
from .slack_files import FileDeletion, SlackFiles

METHODS = Path(__file__).resolve().parent / "slack_spec" / "web_api_methods.json"

UPDATE_LIMIT = 4_000  # bytes of text chat.update accepts (see bot/slack/posted.py)
DROP = -1  # handle()'s status for "reset the connection, answer nothing"

BOT_USER_ID = "UBOT0001"
BOT_ID = "BBOT0001"
TEAM_ID = "T0TEAM001"


def _required_arguments() -> dict[str, set[str]]:
    known = json.loads(METHODS.read_text())
    return {method: set(args) for section in ("methods", "newer_methods")
            for method, args in known[section].items()}


REQUIRED = _required_arguments()


@dataclass
class Call:
    method: str
    args: dict
    at: float = field(default_factory=time.monotonic)

    def __getitem__(self, key):
        return self.args[key]

    def get(self, key, default=None):
        return self.args.get(key, default)


@dataclass
class Message:
    """A message as people would see it now: created by chat.postMessage or chat.startStream,
    then changed by chat.update or appendStream/stopStream. `args` holds its current fields."""

    method: str
    args: dict
    ts: str
    streaming: bool = False
    updates: list[float] = field(default_factory=list)  # monotonic times of each change
    created: float = field(default_factory=time.monotonic)

    def __getitem__(self, key):
        return self.args[key]

    def get(self, key, default=None):
        return self.args.get(key, default)

    @property
    def shown(self) -> str:
        """The Markdown people read: `markdown_text` (streamed messages too), else the message's
        markdown blocks (an answer ending with its feedback buttons), else its plain text."""
        if self.args.get("markdown_text"):
            return self.args["markdown_text"]
        blocks = self.args.get("blocks") if isinstance(self.args.get("blocks"), list) else []
        parts = [b.get("text", "") for b in blocks if isinstance(b, dict) and b.get("type") == "markdown"]
        return "".join(parts) if parts else self.args.get("text") or ""


def _chunk_text(args: dict) -> str:
    text = args.get("markdown_text") or ""
    for chunk in args.get("chunks") or []:
        if chunk.get("type") == "markdown_text":
            text += chunk.get("text", "")
    return text


@dataclass
class Failure:
    error: str
    times: int
    status: int = 200
    retry_after: int | None = None
    applied: bool = False
    drop: bool = False


class FakeSlack:
    def __init__(self, bot_token: str | None = None):
        self.bot_token = bot_token  # the one token file downloads accept; None: any xoxb- token
        self.calls: list[Call] = []
        self.responses: list[dict] = []  # bodies posted to response_url
        self.violations: list[str] = []
        self.names: dict[str, str] = {}
        self.messages: dict[str, Message] = {}
        self.counts: dict[str, int] = {}  # calls per method, cheap to poll
        self.tokens: list[str | None] = []  # the token each call carried, in order
        self._failures: dict[str, list[Failure]] = {}
        self._lock = threading.Lock()
        self._ts = itertools.count(1)
        self.server = BackgroundServer(_Handler)
        self.server.httpd.fake = self
        self.files = SlackFiles(TEAM_ID, lambda: self.server.url, self.accepts)

    # control ----------------------------------------------------------------------------

    @property
    def api_url(self) -> str:
        return self.server.url + "/api/"

    def response_url(self, name: str = "r") -> str:
        return f"{self.server.url}/response/{name}"

    def fail(self, method: str, error: str = "internal_error", *, times: int = 1, status: int = 200,
             retry_after: int | None = None, applied: bool = False, drop: bool = False) -> None:
        with self._lock:
            self._failures.setdefault(method, []).append(
                Failure(error, times, status, retry_after, applied, drop))

    def reset(self) -> None:
        """Forget every call, message, response and scripted failure, as a fresh fake would."""
        with self._lock:
            for record in (self.calls, self.responses, self.tokens):
                record.clear()
            for record in (self.messages, self.counts, self._failures):
                record.clear()
        self.files = SlackFiles(TEAM_ID, lambda: self.server.url, self.accepts)

    def clear_failures(self) -> None:
        with self._lock:
            self._failures.clear()

    def calls_to(self, method: str) -> list[Call]:
        with self._lock:
            return [c for c in self.calls if c.method == method]

    def posts(self, channel: str | None = None, *, top_level: bool | None = None) -> list[Message]:
        """Messages the bot created (posted or streamed), in order, as they look now."""
        with self._lock:
            found = list(self.messages.values())
        if channel:
            found = [c for c in found if c.get("channel") == channel]
        if top_level is True:
            found = [c for c in found if not c.get("thread_ts")]
        if top_level is False:
            found = [c for c in found if c.get("thread_ts")]
        return found

    # files ------------------------------------------------------------------------------

    def accepts(self, token: str) -> bool:
        return token == self.bot_token if self.bot_token else token.startswith("xoxb-")

    def share_file(self, name: str, data: bytes, mimetype: str, filetype: str | None = None, **options) -> dict:
        """Register a file; the answer is its object as a message event's `files` array holds it.
        Options: user, title, refuse (403, 404 or "login")."""
        return self.files.share(name, data, mimetype, filetype, **options)

    def refuse_download(self, file_id: str, how: int | str | None) -> None:
        self.files.refuse(file_id, how)

    def delete_file(self, file_id: str, message: dict | None = None) -> FileDeletion:
        return self.files.delete(file_id, message)

    @property
    def downloads(self) -> list:
        """Every GET of a file URL, in order: url, file_id, token, status, served, at (monotonic)."""
        return list(self.files.downloads)

    def downloads_of(self, file_id: str, *, served: bool | None = None) -> list:
        return [d for d in list(self.files.downloads)
                if d.file_id == file_id and (served is None or d.served == served)]

    def next_ts(self) -> str:
        n = next(self._ts)
        return f"{1_800_000_000 + n}.{n:06d}"

    # serving ----------------------------------------------------------------------------

    def handle(self, method: str, args: dict, token: str | None,
               arrived: float | None = None) -> tuple[int, dict, dict]:
        with self._lock:
            self.calls.append(Call(method, args, at=arrived or time.monotonic()))
            self.counts[method] = self.counts.get(method, 0) + 1
            failure = self._take_failure(method)
        if method not in REQUIRED:
            return self._violation(method, "unknown_method", "no such method")
        if not token:
            return self._violation(method, "not_authed", "no token")
        missing = sorted(REQUIRED[method] - {k for k, v in args.items() if v not in (None, "")})
        if missing:
            return self._violation(method, "invalid_arguments", f"missing {missing}")
        if method == "files.info" and not args.get("file"):
            return self._violation(method, "invalid_arguments", "missing ['file']")
        if method == "chat.postMessage" and not any(args.get(k) for k in ("text", "blocks", "markdown_text", "attachments")):
            return self._violation(method, "no_text", "no text, blocks or markdown_text")
        refused = self._payload_refusal(method, args)
        if refused:
            return refused
        if failure:
            if failure.applied:
                self._answer(method, args)
            if failure.drop:
                return DROP, {}, {}
            headers = {"Retry-After": str(failure.retry_after)} if failure.retry_after is not None else {}
            return failure.status, {"ok": False, "error": failure.error}, headers
        return 200, self._answer(method, args), {}

    def _payload_refusal(self, method: str, args: dict):
        """Slack's answer to blocks, a view or a text it would refuse (the error names Slack uses)."""
        for error, problems in (("invalid_blocks", blocks_problems(args["blocks"]) if "blocks" in args else []),
                                ("invalid_arguments", view_problems(args["view"]) if "view" in args else []),
                                ("msg_too_long", text_problems(args))):
            if problems:
                if error == "invalid_blocks" and not isinstance(args["blocks"], list):
                    error = "invalid_blocks_format"
                return self._violation(method, error, "; ".join(problems))
        return None

    def _take_failure(self, method: str) -> Failure | None:
        queue = self._failures.get(method)
        if not queue:
            return None
        failure = queue[0]
        failure.times -= 1
        if failure.times <= 0:
            queue.pop(0)
        return failure

    def _violation(self, method: str, error: str, why: str):
        with self._lock:
            self.violations.append(f"{method}: {why}")
        return 200, {"ok": False, "error": error}, {}

    def _answer(self, method: str, args: dict) -> dict:
        channel = args.get("channel") or args.get("channel_id")
        if method == "auth.test":
            return {"ok": True, "url": "https://fake.slack.test/", "team": "Fake", "user": "threadfork",
                    "team_id": TEAM_ID, "user_id": BOT_USER_ID, "bot_id": BOT_ID}
        if method in ("chat.postMessage", "chat.startStream"):
            ts = self.next_ts()
            streaming = method == "chat.startStream"
            fields = dict(args)
            if streaming:
                fields["markdown_text"] = _chunk_text(args)
                fields.pop("chunks", None)
            with self._lock:
                self.messages[ts] = Message(method, fields, ts, streaming=streaming)
            message = {"type": "message", "user": BOT_USER_ID, "bot_id": BOT_ID, "ts": ts,
                       "text": args.get("text") or args.get("markdown_text") or ""}
            if args.get("thread_ts"):
                message["thread_ts"] = args["thread_ts"]
            return {"ok": True, "channel": channel, "ts": ts, "message": message}
        if method in ("chat.update", "chat.appendStream", "chat.stopStream"):
            with self._lock:
                target = self.messages.get(args.get("ts"))
                if target is None or target.get("channel") != channel:
                    return {"ok": False, "error": "message_not_found"}
                if method == "chat.update":
                    if any(len(str(args.get(k) or "").encode()) > UPDATE_LIMIT for k in ("text", "markdown_text")):
                        return {"ok": False, "error": "msg_too_long"}
                    for key in ("text", "markdown_text", "blocks"):  # the new content replaces the old
                        if key in args:
                            target.args[key] = args[key]
                        else:
                            target.args.pop(key, None)
                else:
                    if not target.streaming:
                        return {"ok": False, "error": "message_not_in_streaming_state"}
                    target.args["markdown_text"] += _chunk_text(args)
                    target.streaming = method == "chat.appendStream"
                target.updates.append(time.monotonic())
            return {"ok": True, "channel": channel, "ts": args.get("ts"), "text": args.get("text", "")}
        if method == "chat.postEphemeral":
            return {"ok": True, "message_ts": self.next_ts()}
        if method == "users.info":
            user = args["user"]
            name = self.names.get(user, f"person-{user[-4:].lower()}")
            return {"ok": True, "user": {"id": user, "name": name, "real_name": name.title(),
                                         "profile": {"display_name": name, "real_name": name.title()}}}
        if method == "apps.connections.open":
            return {"ok": True, "url": "ws://127.0.0.1:9/socket-mode-not-served"}
        if method == "files.info":
            return self.files.info(args.get("file"))
        if method == "chat.getPermalink":
            return {"ok": True, "channel": channel,
                    "permalink": f"https://fake.slack.test/archives/{channel}/p{args['message_ts'].replace('.', '')}"}
        return {"ok": True}

    def record_response(self, body: dict) -> tuple[int, str]:
        """Keep a body posted to a response_url unless Slack would refuse it or `fail("response_url", …)`
        says otherwise; (the HTTP status, the body) to answer with."""
        refused = problems = None
        if "blocks" in body and blocks_problems(body["blocks"]):
            refused, problems = "invalid_blocks", blocks_problems(body["blocks"])
        elif text_problems(body):
            refused, problems = "msg_too_long", text_problems(body)
        with self._lock:
            if refused:
                self.violations.append(f"response_url: {'; '.join(problems)}")
                return 400, refused
            failure = self._take_failure("response_url")
            if failure is None or failure.applied:
                self.responses.append(body)
        return (failure.status, failure.error) if failure else (200, "ok")

    def start(self) -> FakeSlack:
        self.server.start()
        return self

    def stop(self) -> None:
        self.server.stop()


class _Handler(QuietHandler):
    def do_GET(self):
        self.arrived = time.monotonic()
        if self.path.startswith("/files-pri/"):
            auth = self.headers.get("Authorization", "")
            token = auth.removeprefix("Bearer ").strip() if auth.startswith("Bearer ") else None
            status, body, headers = self.server.fake.files.serve(self.server.fake.server.url + self.path, token)
            self.send(status, body, headers.pop("Content-Type"), headers)
            return
        self._dispatch(dict(parse_qsl(urlparse(self.path).query)))

    def do_POST(self):
        self.arrived = time.monotonic()  # the call reached "Slack"; parsing it is the fake's own cost
        raw = self.body()
        kind = self.headers.get("Content-Type", "")
        if self.path.startswith("/response/"):
            status, answer = self.server.fake.record_response(json.loads(raw or b"{}"))
            self.send(status, answer.encode(), "text/plain")
            return
        if "application/json" in kind:
            args = json.loads(raw or b"{}")
        else:
            args = dict(parse_qsl(raw.decode()))
            for key, opening in (("blocks", "["), ("attachments", "["), ("view", "{")):
                if isinstance(args.get(key), str) and args[key].startswith(opening):
                    args[key] = json.loads(args[key])
        args.update(dict(parse_qsl(urlparse(self.path).query)))
        self._dispatch(args)

    def _dispatch(self, args: dict) -> None:
        path = urlparse(self.path).path
        if not path.startswith("/api/"):
            self.send(404, b'{"ok":false,"error":"unknown_path"}')
            return
        auth = self.headers.get("Authorization", "")
        token = auth.removeprefix("Bearer ").strip() or args.pop("token", None)
        args.pop("token", None)
        self.server.fake.tokens.append(token)
        status, payload, headers = self.server.fake.handle(path[len("/api/"):], args, token, self.arrived)
        if status == DROP:  # a reset (RST), not a clean close: what a dying front end does
            self.connection.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))
            self.connection.close()
            self.close_connection = True
            return
        self.send(status, json.dumps(payload).encode(), headers=headers)
