"""Workspaces that left, in memory (see bot/store/departures.py)."""
from __future__ import annotations

from datetime import datetime

from .state import Memory


class MemoryDepartures:
    def __init__(self, memory: Memory):
        self.m = memory
        self.departed: dict[str, datetime] = {}  # team → when it left

    def depart(self, team_id: str) -> None:
        with self.m.lock:
            self.departed.setdefault(team_id, self.m.clock())

    def returned(self, team_id: str) -> None:
        with self.m.lock:
            self.departed.pop(team_id, None)

    def departed_before(self, when: datetime) -> list[str]:
        with self.m.lock:
            return [team for team, at in sorted(self.departed.items(), key=lambda item: item[1]) if at <= when]

    def settled(self, team_id: str) -> None:
        self.returned(team_id)
