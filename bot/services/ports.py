"""What the use cases need from the outside world, as protocols the adapters implement."""
from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Protocol

from ..domain.context import ModelInput
from ..domain.model import ChannelEconomy, ContextReport, Fork, ForkListing, ForkStats, ForkStatus
from ..llm.claude import Completion


@dataclass(frozen=True)
class Place:
    """Where a reply goes: a channel's top level (thread_ts None) or a fork's thread."""

    channel_id: str
    thread_ts: str | None
    team_id: str | None
    recipient_id: str | None  # the person whose turn is being answered
    reply_to_ts: str | None = None  # their message, if it exists in Slack


@dataclass(frozen=True)
class Audience:
    """One person to answer privately: through a slash command's response_url when there is one."""

    channel_id: str
    user_id: str
    thread_ts: str | None = None
    response_url: str | None = None


class ReplyWriter(Protocol):
    def write(self, delta: str) -> None: ...
    def finish(self) -> list[str]: ...
    def fail(self, notice: str) -> None: ...


class Chat(Protocol):
    def display_name(self, user_id: str) -> str | None: ...
    def begin_reply(self, place: Place) -> ReplyWriter: ...
    def post_fork_root(self, fork: Fork) -> str: ...
    def refresh_fork_root(self, fork: Fork) -> None: ...
    def post_merge(self, fork: Fork, stats: ForkStats, summary: str) -> str: ...
    def note_in_thread(self, fork: Fork, text: str) -> None: ...
    def tell(self, audience: Audience, text: str) -> None: ...
    def post_notice(self, place: Place, text: str) -> None: ...
    def remind(self, fork: Fork, expiry_policy: str, expiry_seconds: float) -> None: ...
    def budget_reached(self, fork: Fork, burned: int, limit: int) -> None: ...
    def show_context(self, audience: Audience, report: ContextReport) -> None: ...
    def show_forks(self, audience: Audience, listings: list[ForkListing], counts: dict[ForkStatus, int]) -> None: ...
    def publish_home(self, user_id: str, listings: list[ForkListing], economy: list[ChannelEconomy]) -> None: ...


class Model(Protocol):
    def complete(self, model_input: ModelInput, on_text: Callable[[str], None] | None = None) -> Completion: ...
