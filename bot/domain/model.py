"""Value objects for sessions, forks and turns.

A session is either a channel's parent or a fork. A fork references its parent and the seq of
the parent's last turn when it was opened (the fork point); inherited context is read through
that pointer, never copied.
"""
from __future__ import annotations

from dataclasses import dataclass, field, fields
from datetime import datetime
from enum import StrEnum
from typing import NamedTuple

from typing import TYPE_CHECKING

from . import text
from .connectors import Connector

if TYPE_CHECKING:  # spend.py prices Usage, defined here
    from .spend import SpendReport

LABEL_TOPIC = 80  # characters of a topic shown in a fork's label (notices, refusals, lists)


class Channel(NamedTuple):
    """A channel as Threadfork keys what it stores: within its workspace, because a channel shared
    between workspaces (Slack Connect) has the same id in each, and each has its own sessions."""

    team_id: str
    id: str


class Role(StrEnum):
    USER = "user"
    ASSISTANT = "assistant"
    SUMMARY = "summary"  # a merged fork's result, appended to the parent
    COMPACTION = "compaction"  # replaces the session's turns up to `covers_seq` in later requests


class TurnStatus(StrEnum):
    PENDING = "pending"  # user turn waiting for its answer
    ANSWERED = "answered"
    FAILED = "failed"  # user turn whose answer failed; kept in the history
    STREAMING = "streaming"  # assistant turn being written; its seq is reserved when the answer starts
    COMPLETE = "complete"  # assistant or summary turn
    INTERRUPTED = "interrupted"  # assistant turn cut off mid-stream
    ABORTED = "aborted"  # assistant turn that produced nothing usable (the call failed)
    STOPPED = "stopped"  # assistant turn a person stopped mid-answer: what it said so far is its answer
    # Claude declined (stop reason `refusal`): the answer and the turns it answered leave the context, as the API
    # asks (platform.claude.com "Handle streaming refusals": reset the context, else refusals continue)
    DECLINED = "declined"


class Mode(StrEnum):
    INHERIT = "inherit"
    FRESH = "fresh"


class ForkStatus(StrEnum):
    OPEN = "open"
    MERGING = "merging"
    MERGED = "merged"
    ABANDONED = "abandoned"


@dataclass(frozen=True)
class Usage:
    input_tokens: int = 0
    output_tokens: int = 0
    cache_read_tokens: int = 0
    cache_write_tokens: int = 0
    searches: int = 0  # web searches and fetches Claude's server tools made for this answer
    fetches: int = 0
    cache_write_1h_tokens: int = 0  # the part of cache_write_tokens written to the 1-hour cache
    # estimated from reported usage at the price table's rates (bot/domain/pricing.py), in micro-dollars
    cost_micros: int = 0
    uncached_micros: int = 0  # what the same calls would have cost without the prompt cache
    unpriced: int = 0  # calls whose model the price table lacks: their cost is unknown, never guessed

    @property
    def prompt_tokens(self) -> int:
        """Everything the model read: fresh input plus cache reads and writes."""
        return self.input_tokens + self.cache_read_tokens + self.cache_write_tokens

    @property
    def total(self) -> int:
        return self.prompt_tokens + self.output_tokens

    def __add__(self, other: Usage) -> Usage:
        return summed(self, other)


def summed(first, second):
    """Two values of one dataclass of numbers, added field by field (dataclasses.astuple would deep-copy every
    field, and usage is added on every answer)."""
    return type(first)(*(getattr(first, f.name) + getattr(second, f.name) for f in fields(first)))


class FileKind(StrEnum):
    IMAGE = "image"  # PNG, JPEG, GIF, WebP: an image block
    DOCUMENT = "document"  # PDF: a document block
    TEXT = "text"  # plain text, Markdown, CSV, JSON, code, logs: read as text


@dataclass(frozen=True)
class Attachment:
    """A file shared with a turn, as Claude sees it: an image or PDF uploaded once to Anthropic's
    Files API (`file_id`), or a text file's text; `deleted` once it was deleted in Slack (the turn's
    words stay, the file is sent no more)."""

    kind: FileKind
    name: str
    media_type: str
    slack_file_id: str
    sha256: str  # the content's identity: one copy (one upload) per content, however often it is shared
    file_id: str | None = None
    text: str | None = None
    deleted: bool = False


@dataclass(frozen=True)
class Turn:
    session_id: int
    seq: int
    role: Role
    text: str
    author_id: str | None = None
    author_name: str | None = None
    status: TurnStatus = TurnStatus.COMPLETE
    usage: Usage = field(default_factory=Usage)
    slack_ts: str | None = None
    id: int | None = None
    covers_seq: int | None = None
    attachments: tuple[Attachment, ...] = ()
    stopped_by: str | None = None  # who stopped this answer (Stop), or asked to while it streams
    stop_reason: str | None = None  # an answer's, as the API gave it (end_turn, max_tokens, refusal, …)
    # when it was stored (a compaction's folds the memory saved before it into its session's prefix); not compared
    created_at: datetime | None = field(default=None, compare=False)


@dataclass(frozen=True)
class ContextSize:
    turns: int
    tokens: int


@dataclass(frozen=True)
class Draft:
    """A summary waiting for review before it enters the parent (THREADFORK_MERGE_REVIEW)."""

    number: int
    text: str
    seq: int  # the fork's last seq when it was written: a later turn makes it stale
    ts: str | None  # its message in the fork's thread
    requested_by: str
    usage: Usage = Usage()


@dataclass(frozen=True)
class Fork:
    id: int
    channel_id: str
    team_id: str
    number: int
    parent_id: int
    mode: Mode
    topic: str
    owner_id: str
    fork_point_seq: int | None  # None: the parent had no turns, or the fork is fresh
    status: ForkStatus
    root_ts: str | None = None
    merged_by: str | None = None
    summary_ts: str | None = None
    last_activity_at: datetime | None = None
    inherited: ContextSize = ContextSize(0, 0)  # the parent context it started from
    origin_ts: str | None = None
    depth: int = 1  # 1: forked from the channel's conversation; 2: from a fork; …
    parent_number: int | None = None  # a nested fork's parent fork and its thread
    parent_root_ts: str | None = None
    opened_at_seq: int | None = None  # the parent's last seq when it opened
    adopted: bool = False  # a thread people began, adopted as a fork (its root is theirs)
    draft: Draft | None = None  # its summary under review, if one is live
    draft_number: int = 0  # drafts made so far
    drafted_seq: int | None = None  # the last seq its latest draft summarised, live or cancelled
    summary_edited_by: str | None = None  # who edited its summary under review before approving it
    # its channel's settings at its fork point (a snapshot, DESIGN invariant 9); None: the defaults
    instructions: str | None = None
    model: str | None = None
    tools: tuple[str, ...] | None = None
    connectors: tuple[Connector, ...] = ()  # names, URLs, allowed tools: never a token
    effort: str | None = None  # None: opened before effort was kept (it answers at its channel's effort now)
    pruned_before_seq: int = 0  # the retention policy removed its turns below this seq (0: none)
    # a private fork (the agent pane): the channel whose conversation it forks, while its thread lives in
    # its owner's DM with the bot (`channel_id`, numbered there, so the channel's numbering shows nothing)
    private_of: str | None = None
    merge_guidance: str = ""  # asked with its merge, for whoever writes the summary
    merge_taken: bool = False  # someone is carrying its merge out (else, merging, it waits for its answer)
    created_at: datetime | None = None  # when it opened: memory saved before is in its prefix, later in a note

    @property
    def channel(self) -> Channel:
        return Channel(self.team_id, self.channel_id)

    @property
    def merge_waiting(self) -> bool:
        """Its merge was asked for and waits for nobody's claim: for the answer in flight to be recorded,
        or for the sweep."""
        return self.status is ForkStatus.MERGING and not self.merge_taken

    @property
    def private(self) -> bool:
        return self.private_of is not None

    @property
    def home(self) -> Channel:
        """Where its summary is posted: the channel a private fork forks, else its own."""
        return Channel(self.team_id, self.private_of or self.channel_id)

    @property
    def root_is_theirs(self) -> bool:
        """Its root is a person's message (an adopted thread, a private fork), never the bot's to change."""
        return self.adopted or self.private

    @property
    def pruned(self) -> bool:
        """Its earliest turns were removed under the retention policy."""
        return self.pruned_before_seq > 0

    @property
    def nested(self) -> bool:
        """Forked from another fork: its summary goes back into that fork, not the channel."""
        return self.depth > 1

    @property
    def label(self) -> str:
        """`#3 “topic”` for mrkdwn: the topic escaped and shortened by the one topic function."""
        return f"#{self.number}" + (f" “{text.topic(self.topic, LABEL_TOPIC)}”" if self.topic else "")


@dataclass(frozen=True)
class ForkStats:
    """What a fork burned against what it returned."""

    turns: int
    burned: Usage
    summary_tokens: int = 0
    connector_calls: tuple[tuple[str, int], ...] = ()  # (connector, MCP tool calls) in its answers


@dataclass(frozen=True)
class ForkListing:
    """One fork as `/forks` and the Home tab show it."""

    fork: Fork
    stats: ForkStats


@dataclass(frozen=True)
class ChannelEconomy:
    """Tokens burned inside a channel's forks against tokens their summaries returned; the web
    research Claude did there; the 👍/👎 its answers and summaries got."""

    channel_id: str
    burned: int
    returned: int
    searches: int = 0
    fetches: int = 0
    good: int = 0
    bad: int = 0


@dataclass(frozen=True)
class ContextReport:
    """What `/context` shows about a channel's parent session."""

    size: ContextSize
    budget: int
    compactions: int
    merged: list[ForkListing]
    open: list[Fork]
    economy: ChannelEconomy | None = None
    connector_calls: dict[int, dict[str, int]] | None = None  # fork number (0: the channel's) → connector → calls
    spend: SpendReport | None = None  # today's and this month's estimated spend
    cap_usd: float | None = None  # the monthly spend cap in force (None or 0: none)
    stop_reasons: dict[str, int] | None = None  # the conversation's answers by stop reason
    effort: str | None = None  # the channel's effort setting (None: the API's default)
    memory: tuple[int, int, int] | None = None  # the channel's memory: (entries, tokens, budget; 0: none)

    @property
    def kept_out(self) -> int:
        """Tokens burned in merged forks that never entered the parent (only summaries did)."""
        return sum(max(0, m.stats.burned.total - m.stats.summary_tokens) for m in self.merged)



@dataclass(frozen=True)
class Session:
    """Where a session lives in Slack: a channel's top level, or a fork's thread."""

    id: int
    channel_id: str
    team_id: str
    fork: Fork | None = None
    pruned_before_seq: int = 0  # the retention policy removed its turns below this seq (0: none)

    @property
    def channel(self) -> Channel:
        return Channel(self.team_id, self.channel_id)

    @property
    def pruned(self) -> bool:
        """Its earliest turns were removed under the retention policy."""
        return self.pruned_before_seq > 0

    @property
    def thread_ts(self) -> str | None:
        return self.fork.root_ts if self.fork else None

    @property
    def home(self) -> Channel:
        """The channel its cost counts in: a private fork's is the channel it forks."""
        return self.fork.home if self.fork else self.channel

    @property
    def answerable(self) -> bool:
        """A merged or abandoned fork answers nothing more; one whose merge waits for its answer answers
        what was said before the merge was asked for (the merge then summarizes it all)."""
        return self.fork is None or self.fork.status is ForkStatus.OPEN or self.fork.merge_waiting
