"""Channel parents and forks. A fork is a row pointing at its parent and at the seq of the parent's
last turn when it was opened (the fork point); fork numbers come from a counter on the parent's row,
whose lock also pins the fork point."""
from __future__ import annotations

from collections.abc import Collection
from decimal import Decimal

from sqlalchemy import bindparam, func, insert, select, update
from sqlalchemy.exc import IntegrityError

from ..domain.model import Channel, ContextSize, Fork, ForkStatus, Mode, Role, Session, TurnStatus
from ..domain.conditions import OneOf
from ..domain.settings import ChannelSettings
from ..domain.queue import being_opened, lease_until
from ..domain.transitions import UNFINISHED
from ..services.ports import Adopted, Opener
from .adoption import ThreadAdoptions
from .private import SqlPrivateForks
from .work import Database
from .moves import clause
from .rows import append, in_channel, index, insert_parent, involves, parent_key, snapshot, to_fork, to_session
from .tables import messages, sessions, turns

PARENT = select(sessions.c.id).where(sessions.c.parent_key == bindparam("key"))
# after every fork's answer (is a merge waiting?), on every command naming a fork and every message in a thread
# (is it a fork's?): built once, not per call (a select built and keyed anew cost ~150 µs of a 300-µs read)
FORK_BY_ID = select(sessions).where(sessions.c.kind == "fork", sessions.c.id == bindparam("id"))
FORK_BY_NUMBER = select(sessions).where(sessions.c.kind == "fork", sessions.c.team_id == bindparam("team_id"),
                                        sessions.c.channel_id == bindparam("channel_id"),
                                        sessions.c.number == bindparam("number"))
FORK_BY_MESSAGE = select(sessions).where(sessions.c.kind == "fork", sessions.c.id.in_(
    select(messages.c.session_id).where(messages.c.team_id == bindparam("team_id"),
                                        messages.c.channel_id == bindparam("channel_id"),
                                        messages.c.ts == bindparam("ts"))))
# on a thread's message that is no fork's: is a fork of the channel being opened (it may be that fork's first)?
OPENING = select(sessions.c.id).where(sessions.c.team_id == bindparam("team_id"),
                                      sessions.c.channel_id == bindparam("channel_id"),
                                      clause(being_opened(bindparam("now")))).limit(1)


class SqlSessions:
    def __init__(self, db: Database):
        self.db = db
        self._adoptions = ThreadAdoptions(db, self.parent_id, self.fork, self.fork_by_message)
        self.private = SqlPrivateForks(db, self.parent_id, self.fork_by_message)

    def parent_id(self, channel: Channel) -> int:
        # read every time, not remembered: another process may forget the channel (bot/store/erasure.py)
        key = parent_key(channel)
        with self.db.reading() as conn:
            found = conn.scalar(PARENT, {"key": key})
        if found is not None:
            return found
        try:
            with self.db.writing() as conn:
                return insert_parent(conn, channel, self.db.now())
        except IntegrityError:  # another delivery created it first
            with self.db.reading() as conn:
                return conn.scalar(PARENT, {"key": key})

    def session(self, session_id: int) -> Session:
        with self.db.reading() as conn:
            return to_session(conn.execute(select(sessions).where(sessions.c.id == session_id)).one())

    def create_fork(self, channel: Channel, owner_id: str, mode: Mode, topic: str,
                    origin_ts: str | None = None, parent: Fork | None = None,
                    defaults: ChannelSettings = ChannelSettings(), opener: Opener | None = None) -> Fork:
        channel_parent = self.parent_id(channel)
        forked_from = parent.id if parent else channel_parent
        origin_seq = self._seq_at(forked_from, origin_ts) if origin_ts else None
        with self.db.writing() as conn:
            counter = conn.execute(
                update(sessions)
                .where(sessions.c.id == channel_parent)
                .values(next_fork_number=sessions.c.next_fork_number + 1)
                .returning(sessions.c.next_fork_number, sessions.c.next_seq)
            ).one()
            last_seq = counter.next_seq if parent is None else conn.scalar(
                select(sessions.c.next_seq).where(sessions.c.id == parent.id))
            fork_point = last_seq if origin_seq is None else origin_seq
            fork_point = fork_point if (mode is Mode.INHERIT and fork_point > 0) else None
            now = self.db.now()
            fork_id = conn.execute(
                insert(sessions)
                .values(kind="fork", channel_id=channel.id, team_id=channel.team_id, parent_id=forked_from,
                        number=counter.next_fork_number, mode=mode.value, topic=topic, owner_id=owner_id,
                        fork_point_seq=fork_point, opened_at_seq=last_seq, status=ForkStatus.OPEN.value,
                        origin_ts=origin_ts, depth=parent.depth + 1 if parent else 1,
                        parent_number=parent.number if parent else None,
                        parent_root_ts=parent.root_ts if parent else None, created_at=now, last_activity_at=now,
                        lease_owner=opener.holder if opener else None,
                        lease_until=lease_until(now, opener.lease_seconds) if opener else None,
                        **snapshot(conn, channel, parent, defaults))
                .returning(sessions.c.id)
            ).scalar_one()
            if opener and topic:  # its first turn, waiting for the opener: before anything said in its thread
                append(conn, now, fork_id, Role.USER, topic, TurnStatus.PENDING, author_id=opener.author_id,
                       author_name=opener.author_name)
            return to_fork(conn.execute(select(sessions).where(sessions.c.id == fork_id)).one())

    def _seq_at(self, session_id: int, ts: str) -> int:
        """The seq of the session's last turn posted at or before Slack time `ts` (0: none)."""
        target = Decimal(ts)
        with self.db.reading() as conn:
            rows = conn.execute(
                select(turns.c.seq, turns.c.slack_ts)
                .where(turns.c.session_id == session_id, turns.c.slack_ts.is_not(None))
                .order_by(turns.c.seq.desc())
            )
            for row in rows:
                if Decimal(row.slack_ts) <= target:
                    return row.seq
        return 0

    def set_root(self, fork_id: int, root_ts: str, inherited: ContextSize) -> None:
        with self.db.writing() as conn:
            conn.execute(update(sessions).where(sessions.c.id == fork_id).values(
                root_ts=root_ts, inherited_turns=inherited.turns, inherited_tokens=inherited.tokens))
            row = conn.execute(select(sessions.c.team_id, sessions.c.channel_id).where(sessions.c.id == fork_id)).one()
            index(conn, Channel(row.team_id, row.channel_id), root_ts, fork_id)

    def adopt_thread(self, channel: Channel, root_ts: str, owner_id: str, holder: str,
                     lease_seconds: float, defaults: ChannelSettings = ChannelSettings()) -> Adopted:
        return self._adoptions.adopt(channel, root_ts, owner_id, holder, lease_seconds, defaults)

    def complete_adoption(self, fork_id: int, topic: str, inherited: ContextSize, transcript: str | None,
                          speaker: str, message_ts: Collection[str]) -> None:
        self._adoptions.complete(fork_id, topic, inherited, transcript, speaker, message_ts)

    def fork(self, fork_id: int) -> Fork | None:
        return self._one_fork(FORK_BY_ID, {"id": fork_id})

    def fork_by_number(self, channel: Channel, number: int) -> Fork | None:
        return self._one_fork(FORK_BY_NUMBER, {"team_id": channel.team_id, "channel_id": channel.id, "number": number})

    def fork_by_message(self, channel: Channel, ts: str) -> Fork | None:
        return self._one_fork(FORK_BY_MESSAGE, {"team_id": channel.team_id, "channel_id": channel.id, "ts": ts})

    def latest_open_fork_of(self, channel: Channel, user_id: str) -> Fork | None:
        forks = self._forks(in_channel(channel), sessions.c.status == ForkStatus.OPEN.value,
                            involves(user_id), order=(sessions.c.last_activity_at.desc(), sessions.c.id.desc()))
        return forks[0] if forks else None

    def forks_in(self, channel: Channel, status: ForkStatus) -> list[Fork]:
        return self._forks(in_channel(channel), sessions.c.status == status.value,
                           order=(sessions.c.number,))

    def children_of(self, fork_id: int) -> list[Fork]:
        return self._forks(sessions.c.parent_id == fork_id,
                           clause(OneOf("status", UNFINISHED)),
                           order=(sessions.c.number,))

    def fork_counts(self, channel: Channel) -> dict[ForkStatus, int]:
        with self.db.reading() as conn:
            rows = conn.execute(
                select(sessions.c.status, func.count())
                .where(in_channel(channel), sessions.c.kind == "fork")
                .group_by(sessions.c.status)
            )
            return {ForkStatus(status): count for status, count in rows}

    def open_forks_of(self, team_id: str, user_id: str) -> list[Fork]:
        return self._forks(sessions.c.team_id == team_id, sessions.c.status == ForkStatus.OPEN.value, involves(user_id),
                           order=(sessions.c.last_activity_at.desc(),))

    def raise_budget(self, fork_id: int, by: int) -> None:
        with self.db.writing() as conn:
            conn.execute(update(sessions).where(sessions.c.id == fork_id)
                         .values(budget_extra=sessions.c.budget_extra + by))

    def budget_extra(self, fork_id: int) -> int:
        with self.db.reading() as conn:
            return conn.scalar(select(sessions.c.budget_extra).where(sessions.c.id == fork_id)) or 0

    def _one_fork(self, statement, values: dict) -> Fork | None:
        with self.db.reading() as conn:
            row = conn.execute(statement, values).first()
            return to_fork(row) if row else None

    def _forks(self, *conditions, order) -> list[Fork]:
        with self.db.reading() as conn:
            rows = conn.execute(select(sessions).where(sessions.c.kind == "fork", *conditions).order_by(*order))
            return [to_fork(r) for r in rows]
