"""The fork state machine (bot/domain/transitions.py) in SQL: each move is one conditional UPDATE
whose row count says who won; a merge is taken only while nothing is in flight in its fork (its lease
free, no turn pending or streaming: invariant 13); the summary enters the parent in the unit of work that marks the fork
merged (Merging.merge_in), and the raw summary stays on the fork until it has been posted, so a crash cannot lose it
(`stuck_merges` finds it for the sweep)."""
from __future__ import annotations

from collections.abc import Collection
from datetime import datetime

from sqlalchemy import exists, select

from ..domain import transitions
from ..domain.merge import MergedSummary
from ..domain.model import Fork, Role, Usage
from ..domain.queue import IN_FLIGHT
from .work import Database
from .moves import change_all, make, where
from .rows import to_fork
from .tables import sessions, turns


class SqlMerges:
    def __init__(self, db: Database):
        self.db = db

    def request_merge(self, fork_id: int, user_id: str, guidance: str = "",
                      idle_before: datetime | None = None) -> bool:
        return self._make(fork_id, transitions.request_merge(user_id, guidance, self.db.now(), idle_before))

    def cancel_merge(self, fork_id: int) -> bool:
        return self._make(fork_id, transitions.cancel_merge())

    def abandon(self, fork_id: int, idle_before: datetime | None = None) -> bool:
        return self._make(fork_id, transitions.abandon(self.db.now(), idle_before))

    def mark_merged(self, fork_id: int, summary: str, usage: Usage) -> bool:
        return self._make(fork_id, transitions.complete_merge(summary, usage, self.db.now()))

    def set_summary_ts(self, fork_id: int, ts: str) -> None:
        with self.db.writing() as conn:
            make(conn, fork_id, transitions.announced(ts))

    def summaries_since(self, parent_id: int, after_seq: int) -> list[MergedSummary]:
        with self.db.reading() as conn:
            rows = conn.execute(
                select(sessions.c.number, turns.c.text)
                .join(sessions, sessions.c.id == turns.c.source_fork_id)
                .where(turns.c.session_id == parent_id, turns.c.role == Role.SUMMARY.value,
                       turns.c.seq > after_seq, turns.c.deleted.is_(False))
                .order_by(turns.c.seq))
            return [MergedSummary(row.number, row.text) for row in rows]

    def summary_of(self, fork_id: int) -> str:
        with self.db.reading() as conn:
            return conn.scalar(select(sessions.c.summary).where(sessions.c.id == fork_id)) or ""

    def stuck_merges(self) -> list[Fork]:
        with self.db.reading() as conn:
            rows = conn.execute(
                select(sessions).where(sessions.c.kind == "fork", *where(transitions.stuck_merge(self.db.now())),
                                       ~_in_flight())
            ).all()
            return [to_fork(r) for r in rows]

    def take_merge(self, fork_id: int, owner: str, lease_seconds: float) -> int:
        with self.db.writing() as conn:
            move = transitions.take_merge(owner, self.db.now(), lease_seconds)
            return make(conn, fork_id, move, returning=sessions.c.merge_attempts, also=(~_in_flight(),)) or 0

    def give_up_merge(self, fork_id: int) -> None:
        with self.db.writing() as conn:
            for move in transitions.give_up_merge():
                make(conn, fork_id, move)

    def renew_merges(self, owners: Collection[str], seconds: float) -> None:
        if owners:
            with self.db.writing() as conn:
                change_all(conn, transitions.claims_of(owners),
                           transitions.renewed_claim(self.db.now(), seconds))

    def release_merges(self, owners: Collection[str]) -> None:
        """Expire their claims at once: the next sweep, anywhere, takes the merges over."""
        if owners:
            with self.db.writing() as conn:
                change_all(conn, transitions.claims_of(owners), transitions.released_claim(self.db.now()))

    def _make(self, fork_id: int, move: transitions.Move) -> bool:
        with self.db.writing() as conn:
            return make(conn, fork_id, move)


def _in_flight():
    """Some turn of the fork is being answered or waits to be (IN_FLIGHT): its merge waits."""
    return exists().where(turns.c.session_id == sessions.c.id, turns.c.status.in_([s.value for s in IN_FLIGHT]))
