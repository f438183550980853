"""Summaries under review, in memory (see bot/store/reviews.py for the rules)."""
from __future__ import annotations

from datetime import timedelta

from bot.domain.model import ForkStatus, Usage

from .state import Memory


class MemoryReviews:
    def __init__(self, memory: Memory):
        self.m = memory

    def begin_draft(self, fork_id: int, seen_number: int, owner: str, lease_seconds: float) -> int:
        with self.m.lock:
            row, now = self.m.sessions[fork_id], self.m.clock()
            if (row.status is not ForkStatus.OPEN or row.draft_number != seen_number
                    or (row.merge_until is not None and row.merge_until >= now)):
                return 0
            row.merge_owner, row.merge_until = owner, now + timedelta(seconds=lease_seconds)
            return seen_number + 1

    def record_draft(self, fork_id: int, number: int, text: str, seq: int, usage: Usage, requested_by: str,
                     owner: str) -> bool:
        with self.m.lock:
            row = self.m.sessions[fork_id]
            if row.status is not ForkStatus.OPEN or row.draft_number != number - 1 or row.merge_owner != owner:
                return False
            row.draft_number, row.draft_text, row.draft_seq, row.draft_ts = number, text, seq, None
            row.draft_by, row.merge_owner, row.merge_until = requested_by, None, None
            row.draft_usage += Usage(usage.prompt_tokens, usage.output_tokens)
            return True

    def release_draft(self, fork_id: int, owner: str) -> None:
        with self.m.lock:
            row = self.m.sessions[fork_id]
            if row.status is ForkStatus.OPEN and row.merge_owner == owner:
                row.merge_owner = row.merge_until = None

    def set_draft_ts(self, fork_id: int, number: int, ts: str) -> None:
        with self.m.lock:
            row = self.m.sessions[fork_id]
            if row.draft_number == number:
                row.draft_ts = ts

    def drop_draft(self, fork_id: int, number: int) -> bool:
        with self.m.lock:
            row = self.m.sessions[fork_id]
            if row.status is not ForkStatus.OPEN or row.draft_number != number or row.draft_text is None:
                return False
            row.draft_text = None
            return True

    def approve(self, fork_id: int, number: int, text: str, user_id: str, edited: bool, owner: str,
                lease_seconds: float) -> bool:
        with self.m.lock:
            row = self.m.sessions[fork_id]
            if row.status is not ForkStatus.OPEN or row.draft_number != number or row.draft_text is None:
                return False
            row.status, row.draft_text, row.summary_edited_by = ForkStatus.MERGING, text, user_id if edited else None
            row.merged_by, row.merge_owner, row.merge_attempts = user_id, owner, 1
            row.merge_until = self.m.clock() + timedelta(seconds=lease_seconds)
            return True
