"""The store's memory entries, one protocol (bundled in `Store` with the others: store.py)."""
from __future__ import annotations

from typing import Protocol

from ...domain.memory import MemoryEntry
from ...domain.model import Channel


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
