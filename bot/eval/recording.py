"""Every Slack port of the use cases without Slack: each call is recorded, in order, as (method, args).

The recall eval (runner.py) and the use-case tests (tests/unit) both use it. It knows the methods from the
ports themselves (bot/services/ports/chat.py), so a new kind of message needs nothing here; a call that
does not fit its port's signature raises TypeError, as it would against the Slack adapter.
- Every call is one `Said(method, args, ts)`, with a ts of its own (the one `post_*` methods return);
  a reply is recorded when its writer ends: `reply` (place, text) or `reply_failed` (place, notice).
- The few methods that answer something answer from what the caller configured: `names` (display_name),
  `admins` (is_admin), `files` (download, by Slack file id), `threads` (thread_messages, by thread ts),
  `rooms` (membership and channel_name: a channel id → its name and members, the bot among them or not).
  Look-ups (display_name, is_admin) are not recorded; a download Slack would refuse is not either.
- `refuse`: the methods that raise ChatUnavailable, as Slack's refusals do.
"""
from __future__ import annotations

import inspect
import itertools
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass

from ..domain.errors import ChatUnavailable
from ..services.ports import CHAT_PORTS, Membership, Place, SharedFile, ThreadMessage

SIGNATURES = {name: inspect.signature(method) for port in CHAT_PORTS for name, method in vars(port).items()
              if callable(method) and not name.startswith("_")}


@dataclass
class Said:
    what: str  # the port's method, or `reply` / `reply_failed`
    args: tuple
    ts: str | None = None

    @property
    def text(self) -> str:
        """The last text among the arguments (what was said, in every method that says something)."""
        return next((a for a in reversed(self.args) if isinstance(a, str)), "")


class RecordingReply:
    def __init__(self, chat: RecordingChat, place: Place):
        self.chat, self.place, self.text = chat, place, ""
        self.failed: str | None = None
        self.tools: list[tuple] = []  # ("started", id, name, detail) and ("finished", id, sources, failed)

    def write(self, delta: str) -> None:
        self.text += delta

    def thinking_started(self) -> None:
        """Nothing to show: the transcript records what was written."""

    def tool_started(self, tool_id: str, name: str, detail: str) -> None:
        self.tools.append(("started", tool_id, name, detail))

    def tool_finished(self, tool_id: str, sources, failed: bool, output: str = "") -> None:
        self.tools.append(("finished", tool_id, list(sources), failed))

    def ended(self) -> None:
        """Nothing to show early: the transcript records the finished reply."""

    def finish(self, tail: str = "", carry_on: str | None = None) -> list[str]:
        self.text += tail
        return [self.chat.record("reply", self.place, self.text).ts]

    def fail(self, notice: str) -> None:
        self.failed = notice
        self.chat.record("reply_failed", self.place, notice)


class RecordingChat:
    def __init__(self, new_ts: Callable[[], str] | None = None, names: dict[str, str] | None = None,
                 unnamed: Callable[[str], str | None] = str.lower):
        """`new_ts`: where recorded messages get their ts — the clock people's messages use, so ts order
        is the order things happened (else a counter of its own); `unnamed`: the display name of
        someone not in `names`."""
        self.said: list[Said] = []
        self.names: dict[str, str] = dict(names or {})
        self.unnamed = unnamed
        self.admins: set[str] = set()  # whom users.info calls a workspace admin or owner
        self.refuse: set[str] = set()
        self.files: dict[str, bytes] = {}
        self.threads: dict[str, list[ThreadMessage]] = {}
        self.rooms: dict[str, tuple[str, set[str]]] = {}  # channel id → (name, members: "bot" for the bot)
        self.read_delay = 0.0  # seconds a thread read takes (others act meanwhile)
        counter = itertools.count(1)
        self._new_ts = new_ts or (lambda: f"{9_000_000_000 + next(counter)}.000100")
        self._lock = threading.Lock()

    def record(self, what: str, *args) -> Said:
        if what in self.refuse:
            raise ChatUnavailable(f"Slack refused {what}")
        with self._lock:
            said = Said(what, args, self._new_ts())
            self.said.append(said)
        return said

    def of(self, what: str) -> list[Said]:
        return [s for s in self.said if s.what == what]

    def told(self, user_id: str | None = None) -> list[str]:
        """The private answers (`tell`), to anyone or to one person."""
        return [s.text for s in self.of("tell") if user_id is None or s.args[0].user_id == user_id]

    def __getattr__(self, method: str) -> Callable[..., str]:
        """Any other port method: recorded; it returns the ts its message got."""
        if method not in SIGNATURES:
            raise AttributeError(f"no Slack port has a method {method!r}")

        def recorded(*args, **kwargs) -> str:
            bound = SIGNATURES[method].bind(self, *args, **kwargs)
            bound.apply_defaults()
            return self.record(method, *list(bound.arguments.values())[1:]).ts

        return recorded

    # the methods that answer something ---------------------------------------------------

    def begin_reply(self, place: Place, stop=None) -> RecordingReply:
        return RecordingReply(self, place)

    def display_name(self, team_id: str, user_id: str) -> str | None:
        return self.names[user_id] if user_id in self.names else self.unnamed(user_id)

    def is_admin(self, team_id: str, user_id: str) -> bool:
        return user_id in self.admins

    def download(self, file: SharedFile) -> bytes:
        if file.id not in self.files:
            raise ChatUnavailable(f"Slack would not give me {file.name}")
        self.record("download", file)
        return self.files[file.id]

    def membership(self, channel, user_id: str) -> Membership:
        if channel.id not in self.rooms:
            raise ChatUnavailable("Slack can't see that channel")
        self.record("membership", channel, user_id)
        name, members = self.rooms[channel.id]
        return Membership(name, "bot" in members, user_id in members)

    def channel_name(self, channel) -> str | None:
        return self.rooms[channel.id][0] if channel.id in self.rooms else None

    def thread_messages(self, channel, thread_ts: str, before: str | None = None) -> list[ThreadMessage]:
        self.record("thread_messages", channel, thread_ts)
        time.sleep(self.read_delay)
        return list(self.threads.get(thread_ts, []))
