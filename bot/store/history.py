"""Each session's settled turns, kept in memory so a long session costs one small query per request.

A turn is settled when its state can no longer change on its own (an answered question, a complete
answer…). The session's `version`, bumped whenever a stored turn is edited, deleted, retried or
removed by the retention policy, keeps the cache honest across replicas; a session deleted outright
(forgotten) has no version to read, and its id is never given to another session. Settled turns come back as the same objects every time —
what the render memo relies on (bot/domain/memo.py).
"""
from __future__ import annotations

import threading
from collections import OrderedDict

from ..domain.model import Role, Turn, TurnStatus

SETTLED = {Role.USER: {TurnStatus.ANSWERED},
           Role.ASSISTANT: {TurnStatus.COMPLETE, TurnStatus.INTERRUPTED, TurnStatus.ABORTED, TurnStatus.STOPPED},
           Role.SUMMARY: {TurnStatus.COMPLETE}, Role.COMPACTION: {TurnStatus.COMPLETE}}


class SettledTurns:
    """A session's settled prefix of turns, at one version."""

    def __init__(self, version: int):
        self.version = version
        self.upto = 0  # seq up to which `turns` is settled
        self.turns: list[Turn] = []

    def extend(self, fresh: list[Turn]) -> list[Turn]:
        """The whole history: the settled prefix, then `fresh` (turns read after it); the prefix grows
        by whatever of `fresh` has settled since."""
        history = self.turns + fresh
        settled = len(self.turns)
        while settled < len(history) and history[settled].status in SETTLED[history[settled].role]:
            settled += 1
        self.turns = history[:settled]
        self.upto = self.turns[-1].seq if self.turns else self.upto
        return history


class HistoryCache:
    """Settled turns of the most recently used sessions."""

    def __init__(self, size: int = 512):
        self.size = size
        self._items: OrderedDict[int, SettledTurns] = OrderedDict()
        self._lock = threading.Lock()

    def at(self, session_id: int, version: int) -> SettledTurns:
        with self._lock:
            cached = self._items.get(session_id)
        return cached if cached is not None and cached.version == version else SettledTurns(version)

    def forget(self, session_id: int) -> None:
        with self._lock:
            self._items.pop(session_id, None)

    def put(self, session_id: int, settled: SettledTurns) -> None:
        with self._lock:
            self._items[session_id] = settled
            self._items.move_to_end(session_id)
            while len(self._items) > self.size:
                self._items.popitem(last=False)
