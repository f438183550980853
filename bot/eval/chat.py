"""The Chat port without Slack: everything the use cases say is recorded, in order, for the runner
to read back (answers, merge posts) and to fail on (a refusal, a failed reply)."""
from __future__ import annotations

import itertools
from dataclasses import dataclass

from ..domain.errors import ChatUnavailable
from ..services.ports import Audience, Place


@dataclass(frozen=True)
class Said:
    what: str  # "reply", "reply_failed", "fork_root", "merge", "tell", "refusal", …
    text: str
    thread_ts: str | None = None
    ts: str | None = None


class _Reply:
    def __init__(self, chat: RecordingChat, place: Place):
        self.chat, self.place, self.parts = chat, place, []

    def write(self, delta: str) -> None:
        self.parts.append(delta)

    def tool_started(self, tool_id: str, name: str, detail: str) -> None:
        pass  # the scenarios use no tools

    def tool_finished(self, tool_id: str, sources, failed: bool) -> None:
        pass

    def finish(self) -> list[str]:
        return [self.chat.record("reply", "".join(self.parts), self.place.thread_ts)]

    def fail(self, notice: str) -> None:
        self.chat.record("reply_failed", notice, self.place.thread_ts)


class RecordingChat:
    # what the eval never expects to hear (it merges without review: a draft would leave a fork unmerged)
    PROBLEMS = ("reply_failed", "tell", "refusal", "notice", "draft")

    def __init__(self, names: dict[str, str]):
        self.names = names
        self.said: list[Said] = []
        self._ts = itertools.count(1)

    def record(self, what: str, text: str, thread_ts: str | None = None) -> str:
        ts = f"1800000000.{next(self._ts):06d}"
        self.said.append(Said(what, text, thread_ts, ts))
        return ts

    def problems(self) -> list[Said]:
        return [s for s in self.said if s.what in self.PROBLEMS]

    def last(self, what: str) -> Said:
        return next(s for s in reversed(self.said) if s.what == what)

    # the Chat port ------------------------------------------------------------------------

    def download(self, file) -> bytes:
        raise ChatUnavailable("the eval shares no files")

    def display_name(self, team_id: str, user_id: str) -> str | None:
        return self.names.get(user_id)

    def thread_messages(self, channel, thread_ts: str) -> list:
        return []  # the scenarios' people talk only to the bot: no thread of theirs is ever adopted

    def begin_reply(self, place: Place) -> _Reply:
        return _Reply(self, place)

    def post_fork_root(self, fork) -> str:
        return self.record("fork_root", fork.topic)

    def refresh_fork_root(self, fork) -> None:
        pass

    def post_merge(self, fork, stats, summary: str) -> str:
        return self.record("merge", summary)

    def note_in_thread(self, fork, text: str) -> None:
        self.record("note", text, fork.root_ts)

    def post_draft(self, fork, draft, guidance: str) -> str:
        return self.record("draft", draft.text, fork.root_ts)

    def close_draft(self, fork, draft, outcome: str) -> None:
        self.record("draft", outcome, fork.root_ts)

    def open_draft_editor(self, team_id: str, trigger_id: str, fork, draft) -> None:
        self.record("draft", "editor", fork.root_ts)

    def ask_redraft_guidance(self, team_id: str, trigger_id: str, fork, draft) -> None:
        self.record("draft", "guidance", fork.root_ts)

    def is_admin(self, team_id: str, user_id: str) -> bool:
        return False  # the eval changes no settings

    def open_settings(self, team_id: str, trigger_id: str, channel_id: str, effective, defaults, choices) -> None:
        self.record("refusal", "settings")

    def ask_to_forget(self, audience: Audience, answer: str) -> None:
        self.record("refusal", "forget")

    def settle_question(self, audience: Audience, text: str) -> None:
        self.record("refusal", text)

    def tell(self, audience: Audience, text: str) -> None:
        self.record("tell", text, audience.thread_ts)

    def refuse_with_children(self, audience: Audience, reason: str, children) -> None:
        self.record("refusal", reason)

    def refuse_merge(self, audience: Audience, reason: str, open_forks) -> None:
        self.record("refusal", reason)

    def post_notice(self, place: Place, text: str) -> None:
        self.record("notice", text, place.thread_ts)

    def remind(self, fork, expiry_policy: str, expiry_seconds: float) -> None:
        self.record("reminder", fork.topic, fork.root_ts)

    def budget_reached(self, fork, burned: int, limit: int) -> None:
        self.record("notice", f"fork budget reached: {burned} of {limit}", fork.root_ts)

    def show_context(self, audience: Audience, report) -> None:
        pass

    def show_forks(self, audience: Audience, listings, counts) -> None:
        pass

    def publish_home(self, team_id: str, user_id: str, listings, economy) -> None:
        pass
