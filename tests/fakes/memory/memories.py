"""Memory entries, in memory (see bot/store/channels.py)."""
from __future__ import annotations

import itertools
from dataclasses import replace

from bot.domain.memory import WORKSPACE, MemoryEntry
from bot.domain.model import Channel

from .state import Memory


class MemoryMemories:
    def __init__(self, memory: Memory):
        self.m = memory
        self._ids = itertools.count(1)  # never reused, as the SQL ids

    def add(self, channel: Channel, text: str, author_id: str, author_name: str | None, *, owner_id=None,
            source_fork=None, source_ts=None, path=None, pending=False) -> MemoryEntry:
        with self.m.lock:
            entry = MemoryEntry(next(self._ids), channel, text, author_id, author_name, self.m.clock(), owner_id,
                                source_fork, source_ts, path, pending)
            self.m.memory_entries[entry.id] = entry
            return entry

    def entries(self, channel: Channel) -> list[MemoryEntry]:
        with self.m.lock:
            return [e for _, e in sorted(self.m.memory_entries.items()) if e.channel == channel]

    def seen_in(self, channel: Channel) -> list[MemoryEntry]:
        with self.m.lock:
            return [e for _, e in sorted(self.m.memory_entries.items())
                    if e.channel in (channel, Channel(channel.team_id, WORKSPACE))]

    def entry(self, entry_id: int) -> MemoryEntry | None:
        with self.m.lock:
            return self.m.memory_entries.get(entry_id)

    def edit(self, entry_id: int, text: str | None = None, path: str | None = None) -> bool:
        return self._change(entry_id, lambda e: True, **{k: v for k, v in (("text", text), ("path", path)) if v})

    def keep(self, entry_id: int) -> bool:
        return self._change(entry_id, lambda e: e.pending, pending=False)

    def share(self, entry_id: int) -> bool:
        return self._change(entry_id, lambda e: e.owner_id is not None, owner_id=None)

    def delete(self, entry_id: int) -> MemoryEntry | None:
        with self.m.lock:
            return self.m.memory_entries.pop(entry_id, None)

    def sizes(self, team_id: str) -> dict[str, int]:
        with self.m.lock:
            found: dict[str, int] = {}
            for e in self.m.memory_entries.values():
                if e.channel.team_id == team_id and e.owner_id is None and not e.pending:
                    found[e.channel.id] = found.get(e.channel.id, 0) + e.tokens
            return found

    def _change(self, entry_id: int, condition, **values) -> bool:
        with self.m.lock:
            entry = self.m.memory_entries.get(entry_id)
            if entry is None or not values or not condition(entry):
                return False
            self.m.memory_entries[entry_id] = replace(entry, **values)
            return True
