"""Stop requests on answers being streamed (see the Stops port): each is one conditional UPDATE on the
reply's row — streaming, and not asked before — whose row count says who won, on any replica."""
from __future__ import annotations

from collections.abc import Collection

from sqlalchemy import bindparam, select, update

from ..domain.model import Channel, Role, TurnStatus
from .work import Database
from .rows import in_channel
from .tables import sessions, turns

_STOPPABLE = (turns.c.status == TurnStatus.STREAMING.value, turns.c.stopped_by.is_(None))

STOP_IN = (update(turns).where(turns.c.session_id == bindparam("in_session"), *_STOPPABLE)
           .values(stopped_by=bindparam("by")).returning(turns.c.id))

# what the one watcher of each process asks every few tenths of a second while it streams something
REQUESTED = select(turns.c.id, turns.c.stopped_by).where(
    turns.c.id.in_(bindparam("ids", expanding=True)), turns.c.stopped_by.is_not(None))


class SqlStops:
    def __init__(self, db: Database):
        self.db = db

    # urgent: a person waits to see their answer stop, and the writer queue may be long under load
    def stop_in(self, session_id: int, user_id: str) -> int | None:
        with self.db.writing(urgent=True) as conn:
            return conn.execute(STOP_IN, {"in_session": session_id, "by": user_id}).scalar()

    def stop_reply(self, channel: Channel, reply_id: int, user_id: str) -> bool:
        with self.db.writing(urgent=True) as conn:
            return conn.execute(
                update(turns).where(turns.c.id == reply_id, *_STOPPABLE,
                                    turns.c.session_id.in_(select(sessions.c.id).where(in_channel(channel))))
                .values(stopped_by=user_id)).rowcount == 1

    def streaming(self, session_id: int) -> int | None:
        with self.db.reading() as conn:
            return conn.execute(select(turns.c.id).where(turns.c.session_id == session_id,
                                                         turns.c.status == TurnStatus.STREAMING.value)
                                .order_by(turns.c.seq.desc()).limit(1)).scalar()

    def askers(self, reply_id: int) -> frozenset[str]:
        reply = select(turns.c.session_id, turns.c.seq).where(turns.c.id == reply_id).subquery()
        with self.db.reading() as conn:
            rows = conn.execute(select(turns.c.author_id).distinct().where(
                turns.c.session_id == reply.c.session_id, turns.c.seq < reply.c.seq,
                turns.c.role == Role.USER.value, turns.c.status == TurnStatus.PENDING.value,
                turns.c.author_id.is_not(None)))
            return frozenset(row.author_id for row in rows)

    def requested(self, reply_ids: Collection[int]) -> dict[int, str]:
        if not reply_ids:
            return {}
        with self.db.reading() as conn:
            return {row.id: row.stopped_by for row in conn.execute(REQUESTED, {"ids": list(reply_ids)})}
