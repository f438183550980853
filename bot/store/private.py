"""Private forks (the agent pane): a fork of a channel's conversation whose thread is a message in one
person's DM with the bot, made exactly once (see PrivateForks.open_private_fork).

The fork's row lives in the DM (channel_id), numbered from the DM parent's counter, and points at the
channel's parent (parent_id, private_of): its thread, its messages' index and its listings are the DM's,
so nothing in the channel shows it; its context and its summary are the channel's. The root's index row
is the once-only key: a second caller fails on it, its transaction (the number taken) rolls back, and it
reads the fork the first one made.
"""
from __future__ import annotations

from collections.abc import Callable

from sqlalchemy import insert, select, update
from sqlalchemy.exc import IntegrityError

from ..domain.model import Channel, Fork, ForkStatus, Mode
from ..domain.settings import ChannelSettings
from ..services.ports import Adopted
from . import statements as sql
from .work import Database
from .rows import snapshot, to_fork
from .tables import sessions


class SqlPrivateForks:
    def __init__(self, db: Database, parent_id: Callable[[Channel], int],
                 fork_by_message: Callable[[Channel, str], Fork | None]):
        self.db = db
        self.parent_id = parent_id
        self.fork_by_message = fork_by_message

    def open_private_fork(self, home: Channel, dm: Channel, root_ts: str, owner_id: str, topic: str,
                          defaults: ChannelSettings = ChannelSettings()) -> Adopted:
        existing = self.fork_by_message(dm, root_ts)
        if existing is not None:
            return Adopted(existing, new=False)
        counter_id, home_parent = self.parent_id(dm), self.parent_id(home)
        try:
            with self.db.writing() as conn:
                number = conn.execute(update(sessions).where(sessions.c.id == counter_id)
                                      .values(next_fork_number=sessions.c.next_fork_number + 1)
                                      .returning(sessions.c.next_fork_number)).scalar_one()
                last_seq = conn.scalar(select(sessions.c.next_seq).where(sessions.c.id == home_parent))
                now = self.db.now()
                fork_id = conn.execute(insert(sessions).values(
                    kind="fork", channel_id=dm.id, team_id=dm.team_id, parent_id=home_parent, number=number,
                    mode=Mode.INHERIT.value, topic=topic, owner_id=owner_id, fork_point_seq=last_seq or None,
                    opened_at_seq=last_seq, status=ForkStatus.OPEN.value, root_ts=root_ts, private_of=home.id,
                    created_at=now, last_activity_at=now, **snapshot(conn, home, None, defaults),
                ).returning(sessions.c.id)).scalar_one()
                conn.execute(sql.INDEX, {"team_id": dm.team_id, "channel_id": dm.id, "ts": root_ts,
                                         "session_id": fork_id})
                return Adopted(to_fork(conn.execute(select(sessions).where(sessions.c.id == fork_id)).one()),
                               new=True)
        except IntegrityError:  # another delivery of the same message made it first
            made = self.fork_by_message(dm, root_ts)
            if made is None:
                raise
            return Adopted(made, new=False)

    def private_forks_of(self, home: Channel, user_id: str) -> list[Fork]:
        with self.db.reading() as conn:
            rows = conn.execute(select(sessions).where(
                sessions.c.kind == "fork", sessions.c.team_id == home.team_id, sessions.c.private_of == home.id,
                sessions.c.owner_id == user_id, sessions.c.status == ForkStatus.OPEN.value).order_by(sessions.c.number))
            return [to_fork(row) for row in rows]
