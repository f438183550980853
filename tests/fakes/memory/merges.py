"""The fork state machine, in memory (see bot/store/merges.py for the rules)."""
from __future__ import annotations

from collections.abc import Collection
from datetime import datetime, timedelta

from bot.domain.merge import MergedSummary
from bot.domain.model import Fork, ForkStatus, Role, Turn, TurnStatus, Usage

from .state import Memory


class MemoryMerges:
    def __init__(self, memory: Memory):
        self.m = memory

    def begin_merge(self, fork_id: int, user_id: str, owner: str, lease_seconds: float,
                    idle_before: datetime | None = None) -> bool:
        with self.m.lock:
            until = self.m.sessions[fork_id].merge_until
            if until is not None and until >= self.m.clock():
                return False  # a draft of its summary is being written
            return self._move(fork_id, ForkStatus.OPEN, ForkStatus.MERGING, idle_before, merged_by=user_id,
                              merge_owner=owner, merge_attempts=1,
                              merge_until=self.m.clock() + timedelta(seconds=lease_seconds))

    def cancel_merge(self, fork_id: int) -> bool:
        return self._move(fork_id, ForkStatus.MERGING, ForkStatus.OPEN, None, merged_by=None, merge_until=None,
                          merge_owner=None)

    def abandon(self, fork_id: int, idle_before: datetime | None = None) -> bool:
        return self._move(fork_id, ForkStatus.OPEN, ForkStatus.ABANDONED, idle_before, draft_text=None,
                          closed_at=self.m.clock())

    def complete_merge(self, fork: Fork, parent_text: str, summary: str, usage: Usage) -> Turn:
        with self.m.lock:
            row = self.m.sessions[fork.id]
            if row.status is not ForkStatus.MERGING:
                raise RuntimeError(f"fork {fork.id} left the merging state")
            row.status, row.summary, row.summary_tokens = ForkStatus.MERGED, summary, usage.output_tokens
            row.draft_text = None  # a review ends with the merge
            row.closed_at = self.m.clock()
            return self.m.append(fork.parent_id, Role.SUMMARY, parent_text, TurnStatus.COMPLETE, usage=usage,
                                 source_fork_id=fork.id)

    def set_summary_ts(self, fork_id: int, ts: str) -> None:
        with self.m.lock:
            row = self.m.sessions[fork_id]
            row.summary_ts, row.merge_until, row.merge_owner = ts, None, None

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
            now = self.m.clock()
            return [r.fork() for r in self.m.forks(
                lambda s: s.merge_until is not None and s.merge_until < now,
                lambda s: s.status is ForkStatus.MERGING or (s.status is ForkStatus.MERGED and s.summary_ts is None))]

    def reclaim_merge(self, fork_id: int, owner: str, lease_seconds: float) -> int:
        with self.m.lock:
            row, now = self.m.sessions[fork_id], self.m.clock()
            if (row.merge_until is None or row.merge_until >= now or row.summary_ts is not None
                    or row.status not in (ForkStatus.MERGING, ForkStatus.MERGED)):
                return 0
            row.merge_until, row.merge_owner = now + timedelta(seconds=lease_seconds), owner
            row.merge_attempts += 1
            return row.merge_attempts

    def give_up_merge(self, fork_id: int) -> None:
        with self.m.lock:
            row = self.m.sessions[fork_id]
            if row.status is ForkStatus.MERGING:
                row.status, row.merged_by = ForkStatus.OPEN, None
            row.merge_until, row.merge_owner, row.merge_attempts = None, None, 0

    def renew_merges(self, owners: Collection[str], seconds: float) -> None:
        with self.m.lock:
            for row in self.m.forks(lambda s: s.merge_owner in owners and s.merge_until is not None):
                row.merge_until = self.m.clock() + timedelta(seconds=seconds)

    def release_merges(self, owners: Collection[str]) -> None:
        with self.m.lock:
            for row in self.m.forks(lambda s: s.merge_owner in owners and s.merge_until is not None):
                row.merge_until, row.merge_owner = self.m.clock() - timedelta(seconds=1), None

    def _move(self, fork_id: int, source: ForkStatus, target: ForkStatus, idle_before: datetime | None,
              **values) -> bool:
        with self.m.lock:
            row = self.m.sessions[fork_id]
            if row.status is not source or (idle_before and row.last_activity_at > idle_before):
                return False
            row.status = target
            for name, value in values.items():
                setattr(row, name, value)
            return True
