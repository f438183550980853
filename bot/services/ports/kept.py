"""The store's ports for what a channel keeps beside its conversations: shared files' contents, feedback, its
settings and connectors, its spend, its memory, and the real deletes (a channel, a workspace, retention)."""
from __future__ import annotations

from collections.abc import Mapping
from datetime import datetime
from typing import Protocol

from ...domain.memory import MemoryEntry
from ...domain.model import Channel, Usage
from ...domain.settings import ChannelSettings
from ...domain.spend import Reservation, Spent, SpendReport
from .values import Standing, StoredFile


class Files(Protocol):
    def known(self, sha256: str) -> StoredFile | None: ...
    def known_shared(self, slack_file_id: str) -> StoredFile | None:
        """The content of a Slack file shared before (it is not downloaded again)."""
    def keep(self, stored: StoredFile) -> None:
        """Keep a content (once: a second keep of the same sha256 changes nothing)."""
    def forget_shared(self, slack_file_id: str) -> int:
        """The file was deleted in Slack: every turn that shared it stops sending it; how many."""
    def forget_files_of(self, channel: Channel, ts: str) -> int:
        """The message's files became tombstones: its turn stops sending them."""


class Feedback(Protocol):
    def record(self, channel: Channel, message_ts: str, user_id: str, value: str) -> bool:
        """A 👍 ("good") or 👎 ("bad") on an answer or summary; False when this person already pressed one."""


class ChannelSettingsStore(Protocol):
    def of(self, channel: Channel) -> ChannelSettings:
        """What the channel's admins chose (every field None where the environment's default applies)."""
    def of_at_the_door(self, channel: Channel) -> ChannelSettings:
        """`of`, for an acknowledgement that waits for it: never queued behind the replies' reads and writes."""
    def save(self, channel: Channel, chosen: ChannelSettings, by: str) -> None:
        """Replace the channel's choices."""
    def shortest(self) -> tuple[float | None, float | None]:
        """The shortest idle reminder and expiry any channel chose (the sweep looks that far back)."""


class ConnectorTokens(Protocol):
    """Connectors' tokens, sealed (bot/secrets): the store never sees one in plain text. A token belongs to
    a connector the channel's settings keep (ChannelSettingsStore.save writes the connectors) and goes
    with it: removed, the channel forgotten, the workspace's data deleted."""

    def sealed(self, channel: Channel) -> dict[str, str]:
        """The channel's connectors that have a token: name → sealed token."""
    def keep(self, channel: Channel, sealed: Mapping[str, str]) -> None:
        """Set the tokens of the channel's connectors: those named in `sealed` get theirs, the others none."""


class ConnectorUse(Protocol):
    """How many MCP tool calls Claude made through each connector, per fork (`/context`, App Home)."""

    def record(self, channel: Channel, fork_number: int, calls: Mapping[str, int]) -> None:
        """Add an answer's calls (fork number 0: the channel's conversation)."""
    def in_channel(self, channel: Channel) -> dict[int, dict[str, int]]:
        """Fork number (0: the channel's conversation) → connector → calls."""


class Spending(Protocol):
    """Each channel's estimated spend per UTC day, from the usage the API reported, priced as each answer,
    summary, draft and compaction is recorded and added in that same transaction (bot/domain/spend.py)."""

    def chosen(self, channel: Channel, thread_ts: str | None = None) -> Standing:
        """The channel's settings, its spend this UTC month and its conversation's session, if it has one — in
        the one read a turn makes (unless its delivery's keep read them: Inbox.keep_and_read); with
        `thread_ts`, also the fork that thread is, if it is one (a thread's message reads both at once), or
        else whether a fork of the channel is being opened (bot/domain/queue.py: being_opened)."""
    def reserve(self, channel: Channel, micros: int, cap_micros: int,
                reply_id: int | None = None) -> Reservation | None:
        """Set `micros` aside on the channel's day, atomically across replicas, if its month's spend plus today's
        reservations is under `cap_micros`; None (nothing set aside) when it is not. With `reply_id`, kept with
        that reply in the same write: it is given back once (record, failure, or the sweep interrupting it)."""
    def release(self, reservation: Reservation) -> None:
        """Give a reservation back whole (an answer recorded gives its back in the same unit of work)."""
    def add(self, home: Channel, usage: Usage, in_fork: bool) -> None:
        """A recorded call's cost added to its channel's day (`home`: a private fork's is the channel it forks).
        Its day's row stays locked till the unit of work ends: the last save of one."""
    def report(self, channel: Channel) -> SpendReport:
        """Today's and this month's figures (UTC), for `/context`."""
    def months(self, team_id: str) -> dict[str, Spent]:
        """This month's figures of every channel of the workspace that spent anything, by channel id."""


class Erasure(Protocol):
    """Real deletes, for people's control over their data: forgetting a channel or a workspace, and the
    retention policy. Every cache of another process notices (the rows it keyed on are gone or their
    session's version moved), so no replica keeps serving what was deleted."""

    def forget_channel(self, channel: Channel) -> int:
        """Everything stored for the channel's conversations: its parent and every fork (any depth),
        their turns (summaries and compactions included), files shared with them (the links; a content
        other turns share stays), their messages' index, the feedback on its messages, leases. Its
        settings stay. The channel starts afresh; fork numbers continue where they stopped, so an old
        fork's number in Slack never names a new fork. Returns how many sessions were deleted."""
    def forget_team(self, team_id: str) -> int:
        """`forget_channel` for every channel of the workspace, and its per-channel settings too; returns
        how many sessions were deleted. Nothing of the workspace stays, fork numbering included."""
    def prune(self, before: datetime) -> int:
        """The retention policy: removes turns created before then from every session (the oldest of
        each, as a prefix: those up to its last turn created before then), and forks closed (merged or
        abandoned) and last active before then, with their turns. A session that lost turns records
        below which seq (Session.pruned_before_seq), so its context can say so; open forks stay. Returns
        how many turns were deleted."""
    def drop_unused_files(self, kept_before: datetime) -> list[str]:
        """Delete the contents no turn shares any more (after a forget, the retention policy, an
        uninstall…) that were kept before then — a content kept since may be about to be attached.
        Returns the model provider's ids of those that had one (their copies there go too)."""


class Memories(Protocol):
    """Memory entries (bot/domain/memory.py): a channel's, a DM's, a workspace's (its channel id WORKSPACE)."""

    def add(self, channel: Channel, text: str, author_id: str, author_name: str | None, *,
            owner_id: str | None = None, source_fork: int | None = None, source_ts: str | None = None,
            path: str | None = None, pending: bool = False) -> MemoryEntry: ...
    def entries(self, channel: Channel) -> list[MemoryEntry]:
        """The channel's entries (personal and pending ones included), oldest first."""
    def seen_in(self, channel: Channel) -> list[MemoryEntry]:
        """The channel's entries and its workspace's, in one read, oldest first."""
    def entry(self, entry_id: int) -> MemoryEntry | None: ...
    def edit(self, entry_id: int, text: str | None = None, path: str | None = None) -> bool: ...
    def keep(self, entry_id: int) -> bool:
        """A pending entry kept (the channel asks first): True for the one caller that kept it."""
    def share(self, entry_id: int) -> bool:
        """A private fork's personal entry becomes its channel's (the fork was merged)."""
    def delete(self, entry_id: int) -> MemoryEntry | None:
        """Deleted for real: the entry for the one caller that deleted it, None for every other."""
    def sizes(self, team_id: str) -> dict[str, int]:
        """Tokens each channel's shared memory holds (the workspace's under WORKSPACE), for App Home."""


class Departures(Protocol):
    """Workspaces that uninstalled the app (or revoked its bot token), and since when."""

    def depart(self, team_id: str) -> None:
        """The workspace left; a second departure keeps the first one's time."""
    def returned(self, team_id: str) -> None:
        """It installed the app again: its departure is forgotten, its conversations stay."""
    def departed_before(self, when: datetime) -> list[str]:
        """Workspaces that left before `when` (and did not return): their conversations are due for deletion."""
    def settled(self, team_id: str) -> None:
        """Its conversations were deleted: nothing is left to do for that departure."""
