"""What the sweep looks for, in memory (see bot/store/upkeep.py; the rules are bot/domain's)."""
from __future__ import annotations

from datetime import datetime

from bot.domain import transitions
from bot.domain.conditions import all_hold, holds
from bot.domain.model import Fork, Role, TurnStatus
from bot.domain.queue import lease_lapsed, stalled_turn

from .state import Memory


class MemoryUpkeep:
    def __init__(self, memory: Memory):
        self.m = memory

    def idle_forks(self, idle_before: datetime, unreminded: bool = False) -> list[Fork]:
        with self.m.lock:
            idle = transitions.idle(idle_before, unreminded)
            rows = self.m.forks(lambda s: all_hold(idle, s))
            return [r.fork() for r in sorted(rows, key=lambda s: s.id)]

    def claim_reminder(self, fork_id: int, idle_before: datetime) -> bool:
        return self.m.move(fork_id, transitions.remind(self.m.clock(), idle_before))

    def stalled_sessions(self, created_before: datetime) -> list[int]:
        with self.m.lock:
            lapsed, stalled = lease_lapsed(self.m.clock()), stalled_turn(created_before)
            return [s.id for s in self.m.sessions.values()
                    if holds(lapsed, s) and any(holds(stalled, r) for r in self.m.rows(s.id))]

    def interrupt_streaming(self, session_id: int) -> int:
        with self.m.lock:
            rows = [r for r in self.m.rows(session_id) if r.turn.status is TurnStatus.STREAMING]
            for row in rows:
                row.change(status=TurnStatus.ABORTED)
                self.m.release(self.m.kept_with.get(row.turn.id))  # what it set aside, given back once
            return len(rows)

    def sessions_over(self, tokens: int) -> list[int]:
        with self.m.lock:
            found = []
            for session_id, rows in self.m.turns.items():
                answers = [r.turn for r in rows
                           if r.turn.role is Role.ASSISTANT and r.turn.status is TurnStatus.COMPLETE]
                if not answers or answers[-1].usage.total < tokens:
                    continue
                if not any(r.turn.role is Role.COMPACTION and r.turn.seq > answers[-1].seq for r in rows):
                    found.append(session_id)
            return found

