"""The fork state machine: open → merging → merged, or open → abandoned. Each move is one conditional
UPDATE whose row count says who won; the summary enters the parent in the transaction that marks
the fork merged, and the raw summary stays on the fork until it has been posted, so a crash cannot
lose it (`stuck_merges` finds it for the sweep)."""
from __future__ import annotations

from collections.abc import Collection
from datetime import datetime, timedelta

from sqlalchemy import or_, select, update

from ..domain.merge import MergedSummary
from ..domain.model import Fork, ForkStatus, Role, Turn, TurnStatus, Usage
from .database import Database
from .rows import append, to_fork
from .tables import sessions, turns


class SqlMerges:
    def __init__(self, db: Database):
        self.db = db

    def begin_merge(self, fork_id: int, user_id: str, owner: str, lease_seconds: float,
                    idle_before: datetime | None = None) -> bool:
        """open → merging, unless a live claim (a draft of its summary being written) holds the fork: one
        summary request at a time per fork, merged or drafted."""
        now = self.db.now()
        return self._move(fork_id, ForkStatus.OPEN, ForkStatus.MERGING, *_idle_since(idle_before),
                          or_(sessions.c.merge_until.is_(None), sessions.c.merge_until < now),
                          merged_by=user_id, merge_owner=owner, merge_attempts=1,
                          merge_until=now + timedelta(seconds=lease_seconds))

    def cancel_merge(self, fork_id: int) -> bool:
        return self._move(fork_id, ForkStatus.MERGING, ForkStatus.OPEN, merged_by=None, merge_until=None,
                          merge_owner=None)

    def abandon(self, fork_id: int, idle_before: datetime | None = None) -> bool:
        return self._move(fork_id, ForkStatus.OPEN, ForkStatus.ABANDONED, *_idle_since(idle_before),
                          draft_text=None, closed_at=self.db.now())

    def complete_merge(self, fork: Fork, parent_text: str, summary: str, usage: Usage) -> Turn:
        now = self.db.now()
        with self.db.writing() as conn:
            moved = conn.execute(
                update(sessions)
                .where(sessions.c.id == fork.id, sessions.c.status == ForkStatus.MERGING.value)
                .values(status=ForkStatus.MERGED.value, summary=summary, summary_tokens=usage.output_tokens,
                        draft_text=None, closed_at=now)  # a review ends with the merge
            ).rowcount
            if moved != 1:
                raise RuntimeError(f"fork {fork.id} left the merging state")
            return append(conn, now, fork.parent_id, Role.SUMMARY, parent_text, TurnStatus.COMPLETE,
                          usage=usage, source_fork_id=fork.id)

    def set_summary_ts(self, fork_id: int, ts: str) -> None:
        with self.db.writing() as conn:
            conn.execute(update(sessions).where(sessions.c.id == fork_id)
                         .values(summary_ts=ts, merge_until=None, merge_owner=None))

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
                select(sessions).where(
                    sessions.c.kind == "fork", sessions.c.merge_until < self.db.now(),
                    or_(sessions.c.status == ForkStatus.MERGING.value,
                        (sessions.c.status == ForkStatus.MERGED.value) & sessions.c.summary_ts.is_(None)))
            ).all()
            return [to_fork(r) for r in rows]

    def reclaim_merge(self, fork_id: int, owner: str, lease_seconds: float) -> int:
        now = self.db.now()
        with self.db.writing() as conn:
            attempt = conn.execute(
                update(sessions)
                .where(sessions.c.id == fork_id, sessions.c.merge_until < now,
                       sessions.c.status.in_([ForkStatus.MERGING.value, ForkStatus.MERGED.value]),
                       sessions.c.summary_ts.is_(None))
                .values(merge_until=now + timedelta(seconds=lease_seconds), merge_owner=owner,
                        merge_attempts=sessions.c.merge_attempts + 1)
                .returning(sessions.c.merge_attempts)
            ).scalar()
        return attempt or 0

    def give_up_merge(self, fork_id: int) -> None:
        with self.db.writing() as conn:
            conn.execute(update(sessions)
                         .where(sessions.c.id == fork_id, sessions.c.status == ForkStatus.MERGING.value)
                         .values(status=ForkStatus.OPEN.value, merged_by=None))
            conn.execute(update(sessions).where(sessions.c.id == fork_id)
                         .values(merge_until=None, merge_owner=None, merge_attempts=0))

    def renew_merges(self, owners: Collection[str], seconds: float) -> None:
        if owners:
            with self.db.writing() as conn:
                conn.execute(update(sessions).where(sessions.c.merge_owner.in_(list(owners)),
                                                    sessions.c.merge_until.is_not(None))
                             .values(merge_until=self.db.now() + timedelta(seconds=seconds)))

    def release_merges(self, owners: Collection[str]) -> None:
        """Expire their claims at once: the next sweep, anywhere, takes the merges over."""
        if owners:
            with self.db.writing() as conn:
                conn.execute(update(sessions).where(sessions.c.merge_owner.in_(list(owners)),
                                                    sessions.c.merge_until.is_not(None))
                             .values(merge_until=self.db.now() - timedelta(seconds=1), merge_owner=None))

    def _move(self, fork_id: int, source: ForkStatus, target: ForkStatus, *conditions, **values) -> bool:
        with self.db.writing() as conn:
            return conn.execute(
                update(sessions)
                .where(sessions.c.id == fork_id, sessions.c.status == source.value, *conditions)
                .values(status=target.value, **values)
            ).rowcount == 1


def _idle_since(idle_before: datetime | None) -> list:
    return [sessions.c.last_activity_at <= idle_before] if idle_before else []
