"""Summaries under review: each move is one conditional UPDATE on the fork's row (its draft columns),
so two people pressing the same button change it once. Writing a draft is claimed through the
fork's merge claim (merge_owner, merge_until) while the live draft stays as it is: the heartbeat
renews the claim, a claim whose process died lapses, and a draft whose writing failed leaves the
live one untouched."""
from __future__ import annotations

from datetime import timedelta

from sqlalchemy import func, or_, update

from ..domain.model import ForkStatus, Usage
from .database import Database
from .tables import sessions

_OPEN = sessions.c.status == ForkStatus.OPEN.value


class SqlReviews:
    def __init__(self, db: Database):
        self.db = db

    def begin_draft(self, fork_id: int, seen_number: int, owner: str, lease_seconds: float) -> int:
        now = self.db.now()
        claimed = self._update(
            fork_id, _OPEN, sessions.c.draft_number == seen_number,
            or_(sessions.c.merge_until.is_(None), sessions.c.merge_until < now),
            merge_owner=owner, merge_until=now + timedelta(seconds=lease_seconds))
        return seen_number + 1 if claimed else 0

    def record_draft(self, fork_id: int, number: int, text: str, seq: int, usage: Usage, requested_by: str,
                     owner: str) -> bool:
        return self._update(
            fork_id, _OPEN, sessions.c.draft_number == number - 1, sessions.c.merge_owner == owner,
            draft_number=number, draft_text=text, draft_seq=seq, draft_ts=None, draft_by=requested_by,
            merge_owner=None, merge_until=None,
            draft_input_tokens=_plus(sessions.c.draft_input_tokens, usage.prompt_tokens),
            draft_output_tokens=_plus(sessions.c.draft_output_tokens, usage.output_tokens))

    def release_draft(self, fork_id: int, owner: str) -> None:
        self._update(fork_id, _OPEN, sessions.c.merge_owner == owner, merge_owner=None, merge_until=None)

    def set_draft_ts(self, fork_id: int, number: int, ts: str) -> None:
        self._update(fork_id, sessions.c.draft_number == number, draft_ts=ts)

    def drop_draft(self, fork_id: int, number: int) -> bool:
        return self._update(fork_id, _OPEN, sessions.c.draft_number == number, sessions.c.draft_text.is_not(None),
                            draft_text=None)

    def approve(self, fork_id: int, number: int, text: str, user_id: str, edited: bool, owner: str,
                lease_seconds: float) -> bool:
        return self._update(
            fork_id, _OPEN, sessions.c.draft_number == number, sessions.c.draft_text.is_not(None),
            status=ForkStatus.MERGING.value, draft_text=text, summary_edited_by=user_id if edited else None,
            merged_by=user_id, merge_owner=owner, merge_attempts=1,
            merge_until=self.db.now() + timedelta(seconds=lease_seconds))

    def _update(self, fork_id: int, *conditions, **values) -> bool:
        with self.db.writing() as conn:
            return conn.execute(update(sessions).where(sessions.c.id == fork_id, *conditions)
                                .values(**values)).rowcount == 1


def _plus(column, amount: int):
    return func.coalesce(column, 0) + amount
