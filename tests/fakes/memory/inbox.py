"""Claims, markers and the durable inbox, in memory (see bot/store/inbox.py)."""
from __future__ import annotations

from collections.abc import Collection
from datetime import datetime, timedelta

from bot.domain.model import Channel
from bot.services.ports import Kept, Standing

from .channel_settings import standing
from .state import InboxRow, Memory


class MemoryClaims:
    def __init__(self, memory: Memory):
        self.m = memory

    def claim(self, key: str) -> bool:
        return self._first(self.m.claims, key)

    def mark(self, key: str) -> bool:
        return self._first(self.m.markers, key)

    def prune(self, before: datetime) -> int:
        with self.m.lock:
            old = [key for key, at in self.m.claims.items() if at < before]
            for key in old:
                del self.m.claims[key]
            return len(old)

    def _first(self, keys: dict, key: str) -> bool:
        with self.m.lock:
            if key in keys:
                return False
            keys[key] = self.m.clock()
            return True


class MemoryInbox:
    def __init__(self, memory: Memory):
        self.m = memory

    def keep(self, key: str, payload: str, claim_seconds: float) -> bool:
        with self.m.lock:
            if key in self.m.inbox:
                return False
            now = self.m.clock()
            self.m.inbox[key] = InboxRow(payload, now, now + timedelta(seconds=claim_seconds))
            return True

    def keep_and_read(self, key: str, payload: str, claim_seconds: float, channel: Channel) -> Standing | None:
        with self.m.lock:
            return standing(self.m, channel) if self.keep(key, payload, claim_seconds) else None

    def done(self, key: str) -> None:
        with self.m.lock:
            if key in self.m.inbox:
                self.m.inbox[key].finish(self.m.clock())

    def due(self, limit: int = 100) -> list[str]:
        with self.m.lock:
            now = self.m.clock()
            rows = [(row.received_at, key) for key, row in self.m.inbox.items()
                    if row.done_at is None and (row.claimed_until is None or row.claimed_until < now)]
            return [key for _, key in sorted(rows)[:limit]]

    def take(self, key: str, claim_seconds: float) -> Kept | None:
        with self.m.lock:
            if key not in self.due(limit=len(self.m.inbox)):
                return None
            row = self.m.inbox[key]
            row.claimed_until, row.attempts = self.m.clock() + timedelta(seconds=claim_seconds), row.attempts + 1
            return Kept(key, row.payload, row.attempts)

    def renew(self, keys: Collection[str], claim_seconds: float) -> None:
        self._claim_until(keys, lambda: self.m.clock() + timedelta(seconds=claim_seconds))

    def release(self, keys: Collection[str]) -> None:
        self._claim_until(keys, lambda: None)

    def prune(self, before: datetime) -> int:
        with self.m.lock:
            old = [key for key, row in self.m.inbox.items() if row.done_at and row.done_at < before]
            for key in old:
                del self.m.inbox[key]
            return len(old)

    def _claim_until(self, keys: Collection[str], until) -> None:
        with self.m.lock:
            for key in keys:
                row = self.m.inbox.get(key)
                if row and row.done_at is None:
                    row.claimed_until = until()
