"""The store, one protocol per concern, bundled in `Store` (see the package's docstring)."""
from __future__ import annotations

from collections.abc import Callable, Collection
from dataclasses import dataclass
from datetime import datetime
from contextlib import AbstractContextManager
from typing import Protocol

from ...domain.merge import MergedSummary
from ...domain.settings import ChannelSettings
from ...domain.queue import Waiting
from ...domain.model import (
    Attachment,
    Channel,
    ChannelEconomy,
    ContextSize,
    Fork,
    ForkStats,
    ForkStatus,
    Mode,
    Role,
    Session,
    Turn,
    TurnStatus,
    Usage,
)
from .intake import Claims, Inbox  # noqa: F401 (part of the bundle's surface)
from .kept import (Files, Feedback, ChannelSettingsStore, ConnectorTokens, ConnectorUse, Spending, Erasure, Memories,
                   Departures)
from .values import Adopted, Clock, Held, Opener


class Sessions(Protocol):
    def parent_id(self, channel: Channel) -> int: ...
    def session(self, session_id: int) -> Session: ...
    def create_fork(self, channel: Channel, owner_id: str, mode: Mode, topic: str,
                    origin_ts: str | None = None, parent: Fork | None = None,
                    defaults: ChannelSettings = ChannelSettings(), opener: Opener | None = None) -> Fork:
        """A new open fork, numbered in the channel's one sequence, forked from the channel's
        conversation or from `parent` (a fork one level up); its fork point is that session's last
        turn, or with `origin_ts` its last turn posted at or before that message. It keeps, for good,
        the settings in force: its parent fork's, or its channel's choices over `defaults`. With an
        `opener`, in the same transaction: leased to the opener, its topic (if any) their waiting turn of seq 1."""
    def set_root(self, fork_id: int, root_ts: str, inherited: ContextSize) -> None: ...
    def fork(self, fork_id: int) -> Fork | None: ...
    def fork_by_number(self, channel: Channel, number: int) -> Fork | None: ...
    def fork_by_message(self, channel: Channel, ts: str) -> Fork | None:
        """The fork whose root, reply or user message has this ts (reactions carry only that)."""
    def latest_open_fork_of(self, channel: Channel, user_id: str) -> Fork | None:
        """The caller's most recently active open fork: one they opened or wrote in."""
    def forks_in(self, channel: Channel, status: ForkStatus) -> list[Fork]: ...
    def children_of(self, fork_id: int) -> list[Fork]:
        """The fork's children not yet merged or abandoned, by number."""
    def fork_counts(self, channel: Channel) -> dict[ForkStatus, int]: ...
    def open_forks_of(self, team_id: str, user_id: str) -> list[Fork]: ...


class Adoptions(Protocol):
    """A thread people started, mentioned into a fork: claimed by one caller, then completed by it."""

    def adopt_thread(self, channel: Channel, root_ts: str, owner_id: str, holder: str,
                     lease_seconds: float, defaults: ChannelSettings = ChannelSettings()) -> Adopted:
        """The fork of the thread under message `root_ts`, created now if there is none, in one
        transaction: an inherited fork numbered in the channel's sequence, its fork point the parent's
        last turn posted strictly before the root, its root indexed, seq 1 kept for the thread's earlier
        messages, leased to `holder` (no one answers it until the adoption is complete). Exactly one
        caller gets `new`; every other gets the fork as it is."""
    def complete_adoption(self, fork_id: int, topic: str, inherited: ContextSize, transcript: str | None,
                          speaker: str, message_ts: Collection[str]) -> None:
        """The adopter's second step: the fork's topic and inherited size; the thread's earlier
        messages as its answered user turn of seq 1 (spoken by `speaker`), their ts indexed to it."""


class ForkBudgets(Protocol):
    """Tokens a fork may spend beyond its budget, raised by its owner."""

    def raise_budget(self, fork_id: int, by: int) -> None: ...
    def budget_extra(self, fork_id: int) -> int: ...


class TurnQueue(Protocol):
    """A session's turns and its lease: loads and saves only. The queue's use cases (bot/services/queue.py) put
    them together, each in one unit of work; which turns form a batch is the domain's (bot/domain/queue.py)."""

    def enqueue(self, session_id: int, text: str, *, author_id: str, author_name: str | None,
                slack_ts: str | None, channel: Channel | None, owner: str, lease_seconds: float,
                attachments: Collection[Attachment] = ()) -> Held | None:
        """Save a user's turn as pending, with the files shared with it (their content kept before with
        Files.keep), and take the session's lease for `owner` if it is free: then the session as held, the
        reply's seq saved right after the turn's. With `channel`, the turn's ts is indexed."""
    def waiting(self, session_id: int) -> list[Waiting]:
        """The session's pending turns in order, each with the attempts made to answer it."""
    def settle(self, turns: Collection[Turn], status: TurnStatus) -> None:
        """These turns, where still pending, now `status`."""
    def start_reply(self, held: Held, answer: Collection[Turn]) -> Turn:
        """Each turn of `answer` counted as one more attempt, and their reply saved, streaming."""
    def history(self, held: Held) -> list[Turn]:
        """The held session's turns, as `turns` gives them."""
    def finish_reply(self, reply: Turn, text: str, usage: Usage, status: TurnStatus, posted: Collection[str],
                     channel: Channel | None, stop_reason: str | None = None) -> None:
        """The answer saved as `status` (STOPPED keeps who stopped it; otherwise a Stop that came too late is
        forgotten), with its first message's ts; with `channel`, every posted message is indexed for reactions."""
    def abort_reply(self, reply: Turn) -> None:
        """The answer leaves the context (the call failed or was never made)."""
    def turns(self, session_id: int, upto_seq: int | None = None) -> list[Turn]:
        """The session's stored turns in order, deleted ones left out. Turns that can no longer
        change come back as the same objects every time (see bot/domain/caching.py)."""
    def append_turn(self, session_id: int, role: Role, text: str, status: TurnStatus, *,
                    author_id: str | None = None, author_name: str | None = None, slack_ts: str | None = None,
                    usage: Usage = Usage(), channel: Channel | None = None,
                    attachments: Collection[Attachment] = (), source_fork_id: int | None = None,
                    covers_seq: int | None = None) -> Turn:
        """A turn stored as it is, nobody leased: a message kept unanswered, with its files; a merged fork's
        summary, from `source_fork_id`; a compaction standing in for the turns up to `covers_seq`."""


class Leases(Protocol):
    """A session's lease: who answers there now (one holder, on any replica; renewed by its heartbeat)."""

    def lease(self, session_id: int, owner: str, seconds: float) -> bool: ...
    def renew(self, session_id: int, owner: str, lease_seconds: float) -> Held | None:
        """Renew `owner`'s lease, stamping the session's activity (its row locked before anything else is read):
        the session as held, or None — `owner` holds it no more (taken over)."""
    def release(self, session_id: int, owner: str) -> None: ...
    def renew_leases(self, owners: Collection[str], seconds: float) -> None:
        """The heartbeat: leases of these owners live `seconds` more."""
    def release_leases(self, owners: Collection[str]) -> None: ...


class Stops(Protocol):
    """Stop pressed on an answer being streamed: recorded once on its reply (one caller wins, on any
    replica), only while it streams — a stop for an answer that ended changes nothing. The process
    streaming it reads the request (`requested`) and stops."""

    def stop_in(self, session_id: int, user_id: str) -> int | None:
        """Ask the answer streaming in the session to stop: its reply's id for the caller that asked
        first; None when nothing streams there or someone asked already."""
    def stop_reply(self, channel: Channel, reply_id: int, user_id: str) -> bool:
        """The same for one answer of the channel, named by its reply's id (a Stop button's value)."""
    def requested(self, reply_ids: Collection[int]) -> dict[int, str]:
        """Those of these replies someone asked to stop: reply id → who asked."""
    def streaming(self, session_id: int) -> int | None:
        """The reply being streamed in the session, if any."""
    def askers(self, reply_id: int) -> frozenset[str]:
        """Who wrote the turns a streaming reply answers (its session's pending turns before it)."""


class PrivateForks(Protocol):
    """Forks of a channel's conversation that live in one person's DM with the bot (the agent pane)."""

    def open_private_fork(self, home: Channel, dm: Channel, root_ts: str, owner_id: str, topic: str,
                          defaults: ChannelSettings = ChannelSettings()) -> Adopted:
        """The private fork whose thread is the DM message `root_ts`, created now if there is none, in one
        transaction: an inherited fork of `home`'s conversation (its fork point that conversation's last
        turn, its settings `home`'s over `defaults`), numbered in the DM's own sequence (so `home`'s
        numbering shows nothing), owned by `owner_id`, its root indexed. Exactly one caller gets `new`."""
    def private_forks_of(self, home: Channel, user_id: str) -> list[Fork]:
        """The open private forks of `home` that `user_id` owns, by number."""


class Pane(Protocol):
    """The channel each person was last seen viewing while the bot's agent pane was open."""

    def viewed(self, team_id: str, user_id: str, channel_id: str | None, seen_at: str) -> None:
        """What Slack says they view (None: no channel), as of `seen_at` (domain.agent.in_order of the event's ts):
        kept unless a view seen later is kept already."""
    def viewing(self, team_id: str, user_id: str) -> str | None: ...


class TurnEdits(Protocol):
    """People's messages edited or deleted in Slack, and failed turns retried."""

    def edit_turn(self, channel: Channel, ts: str, author_id: str, text: str) -> bool: ...
    def delete_turn(self, channel: Channel, ts: str) -> bool: ...
    def retry_turn(self, channel: Channel, ts: str) -> int | None:
        """A failed user turn goes back to pending; returns its session."""


class Merges(Protocol):
    def request_merge(self, fork_id: int, user_id: str, guidance: str = "",
                      idle_before: datetime | None = None) -> bool:
        """open → merging, claimed by nobody yet (one caller wins), its guidance kept; with `idle_before`,
        only if the fork has been idle since then. `take_merge` then carries it out."""
    def cancel_merge(self, fork_id: int) -> bool: ...
    def abandon(self, fork_id: int, idle_before: datetime | None = None) -> bool: ...
    def mark_merged(self, fork_id: int, summary: str, usage: Usage) -> bool:
        """merging → merged, the raw summary kept on the fork until it is posted: False when it was not merging
        (the summary entering its parent is the same unit of work's: Merging.merge_in)."""
    def set_summary_ts(self, fork_id: int, ts: str) -> None: ...
    def summaries_since(self, parent_id: int, after_seq: int) -> list[MergedSummary]:
        """Summaries merged into the parent after that seq, in order (with their forks' numbers)."""
    def summary_of(self, fork_id: int) -> str: ...
    def stuck_merges(self) -> list[Fork]:
        """Merges nobody is carrying out while nothing is in flight in their fork: asked for and not taken,
        or whose worker died (merging, or merged but never announced, with an expired claim)."""
    def take_merge(self, fork_id: int, owner: str, lease_seconds: float) -> int:
        """Take a merge nobody is carrying out (one caller wins), only while no answer is in flight in the
        fork (its lease free, none of its turns pending or streaming): the attempt this is, or 0."""
    def give_up_merge(self, fork_id: int) -> None:
        """After MAX_ATTEMPTS: a merge still being written reopens the fork; an unannounced one stays unposted."""
    def renew_merges(self, owners: Collection[str], seconds: float) -> None: ...
    def release_merges(self, owners: Collection[str]) -> None: ...


class Reviews(Protocol):
    """Summaries under review (THREADFORK_MERGE_REVIEW): at most one live draft per open fork, numbered
    per fork. Writing one is claimed like a merge (renewed by the heartbeat, taken over once it lapses)."""

    def begin_draft(self, fork_id: int, seen_number: int, owner: str, lease_seconds: float) -> int:
        """Claim writing draft `seen_number + 1` of an open fork whose latest draft is `seen_number` and
        that nobody is drafting now: that number, or 0 when another caller won or the fork is not open.
        The live draft, if any, stays live meanwhile."""
    def record_draft(self, fork_id: int, number: int, text: str, seq: int, usage: Usage, requested_by: str,
                     owner: str) -> bool:
        """Draft `number`, written by the claim's `owner` (summarising the fork up to `seq`), becomes the
        live draft and its usage is added to the fork's burn; False when the fork closed meanwhile (its cost
        counted in the same unit of work: Reviews.record)."""
    def release_draft(self, fork_id: int, owner: str) -> None:
        """The writing failed: the claim is given back, the live draft stays."""
    def set_draft_ts(self, fork_id: int, number: int, ts: str) -> None: ...
    def drop_draft(self, fork_id: int, number: int) -> bool:
        """Draft `number` is cancelled: True for the one caller that dropped it."""
    def approve(self, fork_id: int, number: int, text: str, user_id: str, edited: bool) -> bool:
        """open → merging with live draft `number`, its text now `text` (and `user_id` kept as the
        editor when `edited`): exactly one caller wins. Merges.take_merge then carries it out, and
        Merges.complete_merge ends the review."""


class Upkeep(Protocol):
    def idle_forks(self, idle_before: datetime, unreminded: bool = False) -> list[Fork]: ...
    def claim_reminder(self, fork_id: int, idle_before: datetime) -> bool: ...
    def stalled_sessions(self, created_before: datetime) -> list[int]:
        """Sessions nobody is answering although a turn waits, or an answer was cut off."""
    def interrupt_streaming(self, session_id: int) -> int:
        """Answers left half-written by a dead worker leave the context; returns how many."""
    def sessions_over(self, tokens: int) -> list[int]:
        """Sessions whose latest answer reported a context of at least `tokens`, not compacted since."""


class Views(Protocol):
    def stats(self, fork_id: int) -> ForkStats: ...
    def context_size(self, session_id: int, upto_seq: int | None = None) -> ContextSize:
        """Turns and tokens the model sees: the last reply's reported usage plus estimates after it."""
    def economy(self, team_id: str, user_id: str) -> list[ChannelEconomy]:
        """Per channel the user took part in (opened a fork, or wrote a turn): what forks burned
        against what their summaries returned, research, feedback. Nobody sees figures of a channel
        they never wrote in."""
    def channel_economy(self, channel: Channel) -> ChannelEconomy: ...


class Work(Protocol):
    """The unit of work (bot/store/work.py): every load and save made inside `with work():` on this thread is one
    transaction, kept whole at the block's end or not at all when an exception leaves it. A use case opens it
    where several saves must stand or fall together; a lone store call is atomic by itself."""

    def __call__(self) -> AbstractContextManager[None]: ...


@dataclass(frozen=True)
class Store:
    work: Work
    claims: Claims
    inbox: Inbox
    sessions: Sessions
    adoptions: Adoptions
    private: PrivateForks
    budgets: ForkBudgets
    turns: TurnQueue
    leases: Leases
    edits: TurnEdits
    merges: Merges
    reviews: Reviews
    upkeep: Upkeep
    views: Views
    files: Files
    feedback: Feedback
    channel_settings: ChannelSettingsStore
    connector_tokens: ConnectorTokens
    connector_use: ConnectorUse
    stops: Stops
    pane: Pane
    spending: Spending
    erasure: Erasure
    departures: Departures
    memories: Memories
    clock: Clock
    check: Callable[[str], None]  # writes a health row for this process; raises when the store can't be written
