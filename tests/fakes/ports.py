"""Fakes of the Chat and Model ports, for use-case tests without I/O: they record what the use
cases asked for, in order, and answer like the real adapters would (a ts per posted message, a
completion per model call, scripted failures)."""
from __future__ import annotations

import itertools
import threading
import time
from collections import deque
from dataclasses import dataclass, field

from bot.domain.context import ModelInput
from bot.domain.errors import ChatUnavailable, ModelUnavailable
from bot.domain.model import Usage
from bot.services.ports import Audience, Completion, Place, Source, ThreadMessage


@dataclass
class Said:
    """One thing the use cases asked Chat to do."""

    what: str
    args: tuple
    ts: str | None = None

    @property
    def text(self) -> str:
        return next((a for a in reversed(self.args) if isinstance(a, str)), "")


class RecordingReply:
    def __init__(self, chat: RecordingChat, place: Place):
        self.chat, self.place, self.text = chat, place, ""
        self.failed: str | None = None
        self.tools: list[tuple] = []  # ("started", id, name, detail) and ("finished", id, sources, failed)

    def write(self, delta: str) -> None:
        self.text += delta

    def tool_started(self, tool_id: str, name: str, detail: str) -> None:
        self.tools.append(("started", tool_id, name, detail))

    def tool_finished(self, tool_id: str, sources, failed: bool) -> None:
        self.tools.append(("finished", tool_id, list(sources), failed))

    def finish(self) -> list[str]:
        return [self.chat.record("reply", self.place, self.text).ts]

    def fail(self, notice: str) -> None:
        self.failed = notice
        self.chat.record("reply_failed", self.place, notice)


class RecordingChat:
    def __init__(self, new_ts=None):
        """`new_ts`: where posted messages get their ts — the clock people's messages use, so ts order
        is the order things happened (else a counter of its own)."""
        self.said: list[Said] = []
        self.names: dict[str, str] = {}
        self.admins: set[str] = set()  # whom users.info calls a workspace admin or owner
        self.refuse: set[str] = set()  # methods that raise ChatUnavailable, as Slack's refusals do
        self.files: dict[str, bytes] = {}  # Slack file id → the bytes a download gets
        self.threads: dict[str, list[ThreadMessage]] = {}  # thread ts → its messages, as conversations.replies says
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
        """The private answers, to anyone or to one person."""
        return [s.text for s in self.of("tell") if user_id is None or s.args[0].user_id == user_id]

    # the Chat port ------------------------------------------------------------------------

    def display_name(self, team_id: str, user_id: str) -> str | None:
        return self.names.get(user_id, user_id.lower())

    def download(self, file) -> bytes:
        if file.id not in self.files:
            raise ChatUnavailable(f"Slack would not give me {file.name}")
        self.record("download", file)
        return self.files[file.id]

    def thread_messages(self, channel, thread_ts: str) -> list[ThreadMessage]:
        self.record("thread_read", channel, thread_ts)
        time.sleep(self.read_delay)
        return list(self.threads.get(thread_ts, []))

    def begin_reply(self, place: Place) -> RecordingReply:
        return RecordingReply(self, place)

    def post_fork_root(self, fork) -> str:
        return self.record("fork_root", fork).ts

    def refresh_fork_root(self, fork) -> None:
        self.record("refresh_root", fork)

    def post_merge(self, fork, stats, summary: str) -> str:
        return self.record("merge_post", fork, stats, summary).ts

    def note_in_thread(self, fork, text: str) -> None:
        self.record("note", fork, text)

    def post_draft(self, fork, draft, guidance: str) -> str:
        return self.record("draft", fork, draft, guidance).ts

    def close_draft(self, fork, draft, outcome: str) -> None:
        self.record("draft_closed", fork, draft, outcome)

    def open_draft_editor(self, team_id: str, trigger_id: str, fork, draft) -> None:
        self.record("draft_editor", trigger_id, fork, draft)

    def ask_redraft_guidance(self, team_id: str, trigger_id: str, fork, draft) -> None:
        self.record("redraft_guidance", trigger_id, fork, draft)

    def tell(self, audience: Audience, text: str) -> None:
        self.record("tell", audience, text)

    def is_admin(self, team_id: str, user_id: str) -> bool:
        return user_id in self.admins

    def open_settings(self, team_id: str, trigger_id: str, channel_id: str, effective, defaults, choices) -> None:
        self.record("settings", trigger_id, channel_id, effective, defaults, choices)

    def ask_to_forget(self, audience: Audience, answer: str) -> None:
        self.record("ask_to_forget", audience, answer)

    def settle_question(self, audience: Audience, text: str) -> None:
        self.record("settled", audience, text)

    def refuse_with_children(self, audience: Audience, reason: str, children) -> None:
        self.record("refuse_with_children", audience, reason, children)

    def refuse_merge(self, audience: Audience, reason: str, open_forks) -> None:
        self.record("refuse_merge", audience, open_forks, reason)

    def post_notice(self, place: Place, text: str) -> None:
        self.record("notice", place, text)

    def remind(self, fork, expiry_policy: str, expiry_seconds: float) -> None:
        self.record("remind", fork, expiry_policy)

    def budget_reached(self, fork, burned: int, limit: int) -> None:
        self.record("budget", fork, burned, limit)

    def show_context(self, audience: Audience, report) -> None:
        self.record("context", audience, report)

    def show_forks(self, audience: Audience, listings, counts) -> None:
        self.record("forks", audience, listings, counts)

    def publish_home(self, team_id: str, user_id: str, listings, economy) -> None:
        self.record("home", user_id, listings, economy)


@dataclass
class Answer:
    text: str = ""
    usage: Usage = Usage(100, 20)
    error: str | None = None  # raise ModelUnavailable with this message instead
    sources: tuple[Source, ...] = ()


@dataclass
class ScriptedModel:
    """Answers scripted `Answer`s in order, then "Answer N"; records every model input."""

    inputs: list[ModelInput] = field(default_factory=list)
    script: deque = field(default_factory=deque)
    uploads: list[tuple[str, str, bytes]] = field(default_factory=list)
    forgotten: list[str] = field(default_factory=list)  # file ids deleted from the provider

    def answer(self, *answers: Answer) -> None:
        self.script.extend(answers)

    def complete(self, model_input: ModelInput, events=None) -> Completion:
        self.inputs.append(model_input)
        answer = self.script.popleft() if self.script else Answer(f"Answer {len(self.inputs)}")
        if answer.error:
            raise ModelUnavailable(answer.error)
        if events and answer.text:
            events.write(answer.text)
        return Completion(answer.text, answer.usage, answer.sources)

    def upload(self, name: str, media_type: str, data: bytes) -> str:
        self.uploads.append((name, media_type, data))
        return f"file_{len(self.uploads):04d}"

    def forget_upload(self, file_id: str) -> None:
        self.forgotten.append(file_id)

    def texts(self, index: int = -1) -> list[str]:
        """The text blocks of one model input, in order."""
        return [b.text for b in self.inputs[index].blocks]
