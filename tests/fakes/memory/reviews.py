"""Summaries under review, in memory (see bot/store/reviews.py for the rules)."""
from __future__ import annotations

from datetime import timedelta

from bot.domain.model import ForkStatus, Usage

from .state import Memory, SessionRow


class MemoryReviews:
    def __init__(self, memory: Memory):
        self.m = memory

    def begin_draft(self, fork_id: int, seen_number: int, user_id: str, owner: str, lease_seconds: float) -> int:
        with self.m.lock:
            row, now = self.m.sessions[fork_id], self.m.clock()
            if not self._live(row, seen_number) or (row.merge_until is not None and row.merge_until >= now):
                return 0
            row.draft_number, row.draft_by = seen_number + 1, user_id
            row.merge_owner, row.merge_until = owner, now + timedelta(seconds=lease_seconds)
            return row.draft_number

    def record_draft(self, fork_id: int, number: int, text: str, seq: int, usage: Usage) -> bool:
        with self.m.lock:
            row = self.m.sessions[fork_id]
            if not self._live(row, number):
                return False
            row.draft_text, row.draft_seq, row.draft_ts = text, seq, None
            row.merge_owner = row.merge_until = None
            row.draft_usage += Usage(usage.prompt_tokens, usage.output_tokens)
            return True

    def set_draft_ts(self, fork_id: int, number: int, ts: str) -> None:
        with self.m.lock:
            row = self.m.sessions[fork_id]
            if row.draft_number == number:
                row.draft_ts = ts

    def drop_draft(self, fork_id: int, number: int) -> bool:
        with self.m.lock:
            row = self.m.sessions[fork_id]
            if not self._live(row, number) or (row.draft_text is None and row.merge_until is None):
                return False
            row.draft_text = row.merge_owner = row.merge_until = None
            return True

    def approve(self, fork_id: int, number: int, text: str, user_id: str, edited: bool, owner: str,
                lease_seconds: float) -> bool:
        with self.m.lock:
            row = self.m.sessions[fork_id]
            if not self._live(row, number) or row.draft_text is None:
                return False
            row.status, row.draft_text, row.summary_edited_by = ForkStatus.MERGING, text, user_id if edited else None
            row.merged_by, row.merge_owner, row.merge_attempts = user_id, owner, 1
            row.merge_until = self.m.clock() + timedelta(seconds=lease_seconds)
            return True

    @staticmethod
    def _live(row: SessionRow, number: int) -> bool:
        return row.status is ForkStatus.OPEN and row.draft_number == number
