"""Adopting a thread as a fork, exactly once, in two steps (see Sessions.adopt_thread).

1. `adopt`: one transaction takes the next fork number on the parent's row (its lock queues every
   other adopter of the channel), inserts the fork — inherited, adopted, leased to the adopter, seq 1
   kept — and indexes the thread's root. The root's index row is the once-only key: a second adopter
   of the same thread fails on it, its whole transaction (the number taken with it) rolls back, and
   it reads the fork the first one made.
2. `complete`: the adopter's turn of seq 1 (the thread's earlier messages), their ts indexed, the
   fork's topic and inherited size; the session's version is bumped so no cached history misses it.
"""
from __future__ import annotations

from collections.abc import Callable, Collection
from decimal import Decimal

from sqlalchemy import insert, select, update
from sqlalchemy.exc import IntegrityError

from ..domain.model import Channel, ContextSize, Fork, ForkStatus, Mode, Role, TurnStatus, Usage
from ..domain.queue import lease_until
from ..domain.settings import ChannelSettings
from ..services.ports import Adopted
from . import statements as sql
from .work import Database
from .rows import bump, index, snapshot, usage_values
from .tables import sessions, turns

OPENING_SEQ = 1  # the adopted thread's earlier messages: the fork's first turn


class ThreadAdoptions:
    def __init__(self, db: Database, parent_id: Callable[[Channel], int], fork: Callable[[int], Fork | None],
                 fork_by_message: Callable[[Channel, str], Fork | None]):
        self.db = db
        self.parent_id = parent_id
        self.fork = fork
        self.fork_by_message = fork_by_message

    def adopt(self, channel: Channel, root_ts: str, owner_id: str, holder: str, lease_seconds: float,
              defaults: ChannelSettings = ChannelSettings()) -> Adopted:
        existing = self.fork_by_message(channel, root_ts)
        if existing is not None:
            return Adopted(existing, new=False)
        parent = self.parent_id(channel)
        fork_point = last_seq_before(self.db, parent, root_ts)
        try:
            with self.db.writing() as conn:
                counter = conn.execute(
                    update(sessions).where(sessions.c.id == parent)
                    .values(next_fork_number=sessions.c.next_fork_number + 1)
                    .returning(sessions.c.next_fork_number, sessions.c.next_seq)
                ).one()
                now = self.db.now()
                fork_id = conn.execute(insert(sessions).values(
                    kind="fork", channel_id=channel.id, team_id=channel.team_id, parent_id=parent,
                    number=counter.next_fork_number, mode=Mode.INHERIT.value, topic="", owner_id=owner_id,
                    fork_point_seq=fork_point or None, opened_at_seq=counter.next_seq, adopted=True,
                    status=ForkStatus.OPEN.value, root_ts=root_ts, next_seq=OPENING_SEQ, lease_owner=holder,
                    lease_until=lease_until(now, lease_seconds), created_at=now, last_activity_at=now,
                    **snapshot(conn, channel, None, defaults),
                ).returning(sessions.c.id)).scalar_one()
                conn.execute(sql.INDEX, {"team_id": channel.team_id, "channel_id": channel.id, "ts": root_ts,
                                         "session_id": fork_id})
        except IntegrityError:  # another caller adopted the thread first
            adopted = self.fork_by_message(channel, root_ts)
            if adopted is None:
                raise
            return Adopted(adopted, new=False)
        return Adopted(self.fork(fork_id), new=True)

    def complete(self, fork_id: int, topic: str, inherited: ContextSize, transcript: str | None, speaker: str,
                 message_ts: Collection[str]) -> None:
        with self.db.writing() as conn:
            now = self.db.now()
            row = conn.execute(update(sessions).where(sessions.c.id == fork_id).values(
                topic=topic, inherited_turns=inherited.turns, inherited_tokens=inherited.tokens,
                last_activity_at=now).returning(sessions.c.team_id, sessions.c.channel_id)).one()
            if transcript is not None:
                conn.execute(insert(turns).values(
                    session_id=fork_id, seq=OPENING_SEQ, role=Role.USER.value, text=transcript, author_id=None,
                    author_name=speaker, status=TurnStatus.ANSWERED.value, deleted=False, has_files=False,
                    created_at=now, **usage_values(Usage())))
            for ts in message_ts:
                index(conn, Channel(row.team_id, row.channel_id), ts, fork_id)
            bump(conn, {fork_id})


def last_seq_before(db: Database, session_id: int, ts: str) -> int:
    """The seq of the session's last turn posted strictly before Slack time `ts` (0: none)."""
    target = Decimal(ts)
    with db.reading() as conn:
        rows = conn.execute(select(turns.c.seq, turns.c.slack_ts)
                            .where(turns.c.session_id == session_id, turns.c.slack_ts.is_not(None))
                            .order_by(turns.c.seq.desc()))
        return next((row.seq for row in rows if Decimal(row.slack_ts) < target), 0)

