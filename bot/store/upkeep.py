"""What the sweep looks for: idle forks, sessions nobody is answering, sessions due for compaction.
Finding is a plain read; acting is claimed atomically (a reminder, a lease, a compaction key)."""
from __future__ import annotations

from datetime import datetime

from sqlalchemy import exists, func, select, update

from ..domain import transitions
from ..domain.model import Channel, Fork, Role, TurnStatus
from ..domain.queue import lease_lapsed, stalled_turn
from . import channels
from .work import Database
from .moves import clause, make, where
from .rows import to_fork, usage_total
from .tables import sessions, turns


class SqlUpkeep:
    def __init__(self, db: Database):
        self.db = db

    def idle_forks(self, idle_before: datetime, unreminded: bool = False) -> list[Fork]:
        query = select(sessions).where(sessions.c.kind == "fork", *where(transitions.idle(idle_before, unreminded)))
        with self.db.reading() as conn:
            return [to_fork(r) for r in conn.execute(query.order_by(sessions.c.id)).all()]

    def claim_reminder(self, fork_id: int, idle_before: datetime) -> bool:
        """At most one reminder per fork, whichever replica gets here first."""
        with self.db.writing() as conn:
            return make(conn, fork_id, transitions.remind(self.db.now(), idle_before))

    def stalled_sessions(self, created_before: datetime) -> list[int]:
        now = self.db.now()
        waiting = exists().where(turns.c.session_id == sessions.c.id, clause(stalled_turn(created_before), turns))
        with self.db.reading() as conn:
            return list(conn.scalars(
                select(sessions.c.id).where(waiting, clause(lease_lapsed(now)))
            ))

    def interrupt_streaming(self, session_id: int) -> int:
        """Its process died: each reply it was writing is aborted, and what it set aside of the spend cap given
        back (once: spend.release), so the cap is not left eaten until the day ends."""
        streaming = (turns.c.session_id == session_id, turns.c.status == TurnStatus.STREAMING.value)
        with self.db.writing() as conn:
            home = conn.execute(select(sessions.c.team_id, sessions.c.private_of, sessions.c.channel_id)
                                .where(sessions.c.id == session_id)).one()
            for reply in conn.execute(select(turns.c.id).where(*streaming, turns.c.reserved_micros > 0)).all():
                channels.release_kept(conn, Channel(home.team_id, home.private_of or home.channel_id), reply.id)
            return conn.execute(update(turns).where(*streaming).values(status=TurnStatus.ABORTED.value)).rowcount

    def sessions_over(self, tokens: int) -> list[int]:
        answer, other, compaction = turns.alias("answer"), turns.alias("other"), turns.alias("compaction")
        latest = (select(func.max(other.c.seq))
                  .where(other.c.session_id == answer.c.session_id, other.c.role == Role.ASSISTANT.value,
                         other.c.status == TurnStatus.COMPLETE.value)
                  .scalar_subquery())
        compacted_since = exists().where(compaction.c.session_id == answer.c.session_id,
                                         compaction.c.role == Role.COMPACTION.value,
                                         compaction.c.seq > answer.c.seq)
        with self.db.reading() as conn:
            return list(conn.scalars(
                select(answer.c.session_id)
                .where(answer.c.role == Role.ASSISTANT.value, answer.c.seq == latest,
                       usage_total(answer) >= tokens, ~compacted_since)
            ))

