"""Slack and Claude, as the use cases see them."""
from __future__ import annotations

from typing import Protocol

from ...domain.context import ModelInput
from ...domain.model import Channel, ChannelEconomy, ContextReport, Draft, Fork, ForkListing, ForkStats, ForkStatus
from ...domain.settings import ChannelSettings, Choices
from .values import Audience, Completion, Place, SharedFile, Source, ThreadMessage

class ReplyEvents(Protocol):
    """What a model call reports while it works."""

    def write(self, delta: str) -> None: ...
    def tool_started(self, tool_id: str, name: str, detail: str) -> None:
        """Claude began a web search (`detail`: the query) or fetch (the URL)."""
    def tool_finished(self, tool_id: str, sources: list[Source], failed: bool) -> None: ...


class ReplyWriter(ReplyEvents, Protocol):
    def finish(self) -> list[str]:
        """The answer is complete: show it all; the ts of the messages that hold it."""
    def fail(self, notice: str) -> None: ...


class Chat(Protocol):
    def display_name(self, team_id: str, user_id: str) -> str | None: ...
    def download(self, file: SharedFile) -> bytes:
        """The file's bytes, with its workspace's bot token; raises ChatUnavailable when Slack will not give them."""
    def begin_reply(self, place: Place) -> ReplyWriter: ...
    def thread_messages(self, channel: Channel, thread_ts: str) -> list[ThreadMessage]:
        """Every message of the thread, its root first (conversations.replies, all pages); raises
        ChatUnavailable when Slack will not say. Only an adoption reads a thread."""
    def post_fork_root(self, fork: Fork) -> str: ...
    def refresh_fork_root(self, fork: Fork) -> None: ...
    def post_merge(self, fork: Fork, stats: ForkStats, summary: str) -> str: ...
    def note_in_thread(self, fork: Fork, text: str) -> None: ...
    def post_draft(self, fork: Fork, draft: Draft, guidance: str) -> str:
        """A summary under review, in the fork's thread, with its Merge as is / Edit / Redraft / Cancel buttons."""
    def close_draft(self, fork: Fork, draft: Draft, outcome: str) -> None:
        """The draft's message without its buttons, saying what became of it."""
    def open_draft_editor(self, team_id: str, trigger_id: str, fork: Fork, draft: Draft) -> None: ...
    def ask_redraft_guidance(self, team_id: str, trigger_id: str, fork: Fork, draft: Draft) -> None: ...
    def tell(self, audience: Audience, text: str) -> None: ...
    def is_admin(self, team_id: str, user_id: str) -> bool:
        """A workspace admin or owner, as users.info says now; raises ChatUnavailable when Slack won't say."""
    def open_settings(self, team_id: str, trigger_id: str, channel_id: str, effective: ChannelSettings,
                      defaults: ChannelSettings, choices: Choices) -> None:
        """The channel's settings modal, showing the values in effect (the defaults where none was chosen)."""
    def ask_to_forget(self, audience: Audience, answer: str) -> None:
        """A private question whose confirming button carries `answer`, a one-time value."""
    def settle_question(self, audience: Audience, text: str) -> None:
        """The private question a button was pressed on, replaced by `text` (its buttons gone)."""
    def refuse_merge(self, audience: Audience, reason: str, open_forks: list[Fork]) -> None: ...
    def refuse_with_children(self, audience: Audience, reason: str, children: list[Fork]) -> None:
        """A fork can't close while its own forks are open: say so, with each one's Merge/Abandon buttons."""
    def post_notice(self, place: Place, text: str) -> None: ...
    def remind(self, fork: Fork, expiry_policy: str, expiry_seconds: float) -> None:
        """`expiry_policy`: what its expiry will do — `merge`, `abandon`, or `draft` (under review)."""
    def budget_reached(self, fork: Fork, burned: int, limit: int) -> None: ...
    def show_context(self, audience: Audience, report: ContextReport) -> None: ...
    def show_forks(self, audience: Audience, listings: list[ForkListing], counts: dict[ForkStatus, int]) -> None: ...
    def publish_home(self, team_id: str, user_id: str, listings: list[ForkListing],
                     economy: list[ChannelEconomy]) -> None: ...


class Model(Protocol):
    def complete(self, model_input: ModelInput, events: ReplyEvents | None = None) -> Completion: ...
    def upload(self, name: str, media_type: str, data: bytes) -> str:
        """Keep a file with the model's provider (Anthropic's Files API); its id for requests."""
    def forget_upload(self, file_id: str) -> None:
        """Delete a file kept with the provider (one already gone counts as deleted); raises
        ModelUnavailable when the provider can't be reached."""
