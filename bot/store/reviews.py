"""Summaries under review (bot/domain/transitions.py): each move is one conditional UPDATE on the
fork's row (its draft columns), so two people pressing the same button change it once. Writing a
draft is claimed through the fork's merge claim (merge_owner, merge_until) while the live draft
stays as it is: the heartbeat renews the claim, a claim whose process died lapses, and a draft whose
writing failed leaves the live one untouched."""
from __future__ import annotations

from ..domain import transitions
from ..domain.model import Usage
from .work import Database
from .moves import make


class SqlReviews:
    def __init__(self, db: Database):
        self.db = db

    def begin_draft(self, fork_id: int, seen_number: int, owner: str, lease_seconds: float) -> int:
        claimed = self._make(fork_id, transitions.begin_draft(seen_number, owner, self.db.now(), lease_seconds))
        return seen_number + 1 if claimed else 0

    def record_draft(self, fork_id: int, number: int, text: str, seq: int, usage: Usage, requested_by: str,
                     owner: str) -> bool:
        return self._make(fork_id, transitions.record_draft(number, text, seq, usage, requested_by, owner))

    def release_draft(self, fork_id: int, owner: str) -> None:
        self._make(fork_id, transitions.release_draft(owner))

    def set_draft_ts(self, fork_id: int, number: int, ts: str) -> None:
        self._make(fork_id, transitions.draft_posted(number, ts))

    def drop_draft(self, fork_id: int, number: int) -> bool:
        return self._make(fork_id, transitions.drop_draft(number))

    def approve(self, fork_id: int, number: int, text: str, user_id: str, edited: bool) -> bool:
        return self._make(fork_id, transitions.approve(number, text, user_id, edited))

    def _make(self, fork_id: int, move: transitions.Move) -> bool:
        with self.db.writing() as conn:
            return make(conn, fork_id, move)
