"""The fork state machine, in memory: the domain's moves (bot/domain/transitions.py) made under the
memory's lock, as bot/store/merges.py makes them in one UPDATE."""
from __future__ import annotations

from collections.abc import Collection
from datetime import datetime

from bot.domain import transitions
from bot.domain.conditions import all_hold
from bot.domain.merge import MergedSummary
from bot.domain.model import Fork, Role, Usage
from bot.domain.queue import IN_FLIGHT

from .state import Memory


class MemoryMerges:
    def __init__(self, memory: Memory):
        self.m = memory

    def request_merge(self, fork_id: int, user_id: str, guidance: str = "",
                      idle_before: datetime | None = None) -> bool:
        return self.m.move(fork_id, transitions.request_merge(user_id, guidance, self.m.clock(), idle_before))

    def cancel_merge(self, fork_id: int) -> bool:
        return self.m.move(fork_id, transitions.cancel_merge())

    def abandon(self, fork_id: int, idle_before: datetime | None = None) -> bool:
        return self.m.move(fork_id, transitions.abandon(self.m.clock(), idle_before))

    def mark_merged(self, fork_id: int, summary: str, usage: Usage) -> bool:
        return self.m.move(fork_id, transitions.complete_merge(summary, usage, self.m.clock()))

    def set_summary_ts(self, fork_id: int, ts: str) -> None:
        self.m.move(fork_id, transitions.announced(ts))

    def summaries_since(self, parent_id: int, after_seq: int) -> list[MergedSummary]:
        with self.m.lock:
            return [MergedSummary(self.m.sessions[r.source_fork_id].number, r.turn.text)
                    for r in self.m.rows(parent_id)
                    if r.turn.role is Role.SUMMARY and r.turn.seq > after_seq and not r.deleted and r.source_fork_id]

    def summary_of(self, fork_id: int) -> str:
        with self.m.lock:
            return self.m.sessions[fork_id].summary or ""

    def stuck_merges(self) -> list[Fork]:
        with self.m.lock:
            stuck = transitions.stuck_merge(self.m.clock())
            return [r.fork() for r in self.m.forks(lambda s: all_hold(stuck, s), self._quiet)]

    def take_merge(self, fork_id: int, owner: str, lease_seconds: float) -> int:
        with self.m.lock:
            if not self._quiet(self.m.sessions[fork_id]) or \
                    not self.m.move(fork_id, transitions.take_merge(owner, self.m.clock(), lease_seconds)):
                return 0
            return self.m.sessions[fork_id].merge_attempts

    def _quiet(self, session) -> bool:
        """None of its turns in flight (bot/store/merges.py: _in_flight)."""
        return not any(r.status in IN_FLIGHT for r in self.m.rows(session.id))

    def give_up_merge(self, fork_id: int) -> None:
        with self.m.lock:
            for move in transitions.give_up_merge():
                self.m.move(fork_id, move)

    def renew_merges(self, owners: Collection[str], seconds: float) -> None:
        self.m.change_all(transitions.claims_of(owners), transitions.renewed_claim(self.m.clock(), seconds))

    def release_merges(self, owners: Collection[str]) -> None:
        self.m.change_all(transitions.claims_of(owners), transitions.released_claim(self.m.clock()))
