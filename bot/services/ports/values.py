"""The values the ports exchange."""
from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import datetime

from ...domain.memory import MemoryEntry
from ...domain.model import Channel, FileKind, Fork, Session, Turn, Usage
from ...domain.settings import ChannelSettings
from ...domain.queue import MAX_ATTEMPTS  # noqa: F401 (the services' name for it; the rule is the domain's)

Clock = Callable[[], datetime]  # naive UTC
BotUsers = Callable[[str], "str | None"]  # team id → the bot's own user id in that workspace


@dataclass(frozen=True)
class Source:
    """A web page an answer relied on (from Claude's web search or fetch)."""

    url: str
    title: str


@dataclass(frozen=True)
class Completion:
    """What one model call produced: its text, usage, and the pages its research relied on."""

    text: str
    usage: Usage
    sources: tuple[Source, ...] = ()
    connector_calls: tuple[tuple[str, int], ...] = ()  # (connector, MCP tool calls) in the answer
    failed_connectors: tuple[tuple[str, str], ...] = ()  # (connector, what went wrong)
    stopped: bool = False  # a person stopped it (Stop): `text` is what was written until then
    stop_reason: str | None = None  # the API's (end_turn, max_tokens, refusal, …); None when it never came


@dataclass(frozen=True)
class Standing:
    """What a turn reads of its channel, in one read: the channel's settings, its spend this UTC month in
    micro-dollars and its conversation's session (None: the channel has none yet); for a thread's message, the
    fork that thread is (None: it is none) and, when it is none, whether a fork of the channel is being opened
    (its opener alive, its root's ts not recorded yet: the message may be that fork's first)."""

    settings: ChannelSettings
    month_micros: int
    parent_id: int | None
    fork: Fork | None = None
    opening: bool = False
    reserved_micros: int = 0  # set aside today by the answers being written now (bot/domain/spend.py)


@dataclass(frozen=True)
class StoredFile:
    """A file's content as kept once: an image or PDF by its Files API id, a text file by its text."""

    sha256: str
    kind: FileKind
    media_type: str
    size: int
    file_id: str | None = None
    text: str | None = None


@dataclass(frozen=True)
class SharedFile:
    """A file as Slack describes it in a message event."""

    id: str
    name: str
    mimetype: str
    filetype: str
    size: int
    url: str | None  # url_private_download
    team_id: str = ""  # the workspace whose bot token may download it

@dataclass(frozen=True)
class Batch:
    """Turns to answer in one model call, with the reply's reserved place and the session's history
    (pending turns and the reserved reply included). `given_up`: turns whose answer was begun
    MAX_ATTEMPTS times and never recorded, now failed; their authors are owed a notice. With only
    those, `pending` is empty, `reply` None, and the lease was released."""

    session: Session
    pending: list[Turn]
    reply: Turn | None
    history: list[Turn]
    given_up: list[Turn] = field(default_factory=list)
    # a channel conversation's memory (its entries and its workspace's), read with the history in its unit of work;
    # None: not read (a fork's comes from the top of its chain)
    memory: list[MemoryEntry] | None = None


@dataclass(frozen=True)
class Held:
    """A session as the holder of its lease just found it. `version` (bumped by every edit of its turns) dates
    its history; `reply_seq`: the seq saved for the reply of the batch it answers first, if one was."""

    session: Session
    version: int = 0
    reply_seq: int | None = None


@dataclass(frozen=True)
class Kept:
    """A delivery taken out of the inbox for replay: `attempts` counts this one."""

    key: str
    payload: str
    attempts: int


@dataclass(frozen=True)
class Submitted:
    """A user's turn handed in: `stored` is False for a duplicate; `batch` is set when this caller
    took the session's lease and must answer (and then keep answering until Queue.next is None)."""

    stored: bool
    batch: Batch | None = None


@dataclass(frozen=True)
class Place:
    """Where a reply goes: a channel's top level (thread_ts None) or a fork's thread."""

    channel_id: str
    thread_ts: str | None
    team_id: str
    recipient_id: str | None  # the person whose turn is being answered
    reply_to_ts: str | None = None  # their message, if it exists in Slack
    reply_id: int | None = None  # the answer's stored turn (what a top-level answer's Stop button names)


@dataclass(frozen=True)
class Audience:
    """One person to answer privately: through a slash command's response_url when there is one."""

    team_id: str
    channel_id: str
    user_id: str
    thread_ts: str | None = None
    response_url: str | None = None

    @property
    def channel(self) -> Channel:
        return Channel(self.team_id, self.channel_id)


@dataclass(frozen=True)
class ThreadMessage:
    """One message of a Slack thread, as conversations.replies gives it."""

    ts: str
    user_id: str | None  # None for another app's post made without a bot user
    text: str
    name: str | None = None  # the name Slack shows for a post without a user (an app's username)
    files: tuple[str, ...] = ()  # names of the files shared with it


@dataclass(frozen=True)
class Membership:
    """Who is in a channel, as far as a private fork of it needs to know (conversations.info / members)."""

    name: str | None  # the channel's name, when Slack shows it to the bot
    bot_in: bool
    person_in: bool


@dataclass(frozen=True)
class Opener:
    """Who opens a fork (`/fork`): the fork is made leased to `holder` (for `lease_seconds`, renewed by their
    heartbeat), and its topic, if any, stored in the same write as its first turn, theirs, waiting. So whatever
    is said in its thread the moment its root appears queues behind the opening and follows the topic."""

    holder: str
    lease_seconds: float
    author_id: str
    author_name: str | None


@dataclass(frozen=True)
class Adopted:
    """The fork a thread is: `new` for the one caller that adopted it (and must complete the adoption)."""

    fork: Fork
    new: bool
