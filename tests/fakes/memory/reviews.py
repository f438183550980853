"""Summaries under review, in memory: the domain's moves (bot/domain/transitions.py) made under the
memory's lock, as bot/store/reviews.py makes them in one UPDATE."""
from __future__ import annotations

from bot.domain import transitions
from bot.domain.model import Usage

from .state import Memory


class MemoryReviews:
    def __init__(self, memory: Memory):
        self.m = memory

    def begin_draft(self, fork_id: int, seen_number: int, owner: str, lease_seconds: float) -> int:
        claimed = self.m.move(fork_id, transitions.begin_draft(seen_number, owner, self.m.clock(), lease_seconds))
        return seen_number + 1 if claimed else 0

    def record_draft(self, fork_id: int, number: int, text: str, seq: int, usage: Usage, requested_by: str,
                     owner: str) -> bool:
        with self.m.lock:
            return self.m.move(fork_id, transitions.record_draft(number, text, seq, usage, requested_by, owner))

    def release_draft(self, fork_id: int, owner: str) -> None:
        self.m.move(fork_id, transitions.release_draft(owner))

    def set_draft_ts(self, fork_id: int, number: int, ts: str) -> None:
        self.m.move(fork_id, transitions.draft_posted(number, ts))

    def drop_draft(self, fork_id: int, number: int) -> bool:
        return self.m.move(fork_id, transitions.drop_draft(number))

    def approve(self, fork_id: int, number: int, text: str, user_id: str, edited: bool) -> bool:
        return self.m.move(fork_id, transitions.approve(number, text, user_id, edited))
