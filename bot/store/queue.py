"""The turn queue: a user's turn is stored as pending and the session leased in one transaction;
the lease holder answers every pending turn in order, one batch per model call.

Each write that hands the holder work (submit, record reply, abort) finds the next batch in the same
transaction, and finding none releases the lease there too. Renewing the lease first locks the
session row, so a turn submitted concurrently is either in the batch or finds the lease free.

Each session's settled turns, kept in memory so a long session costs one small query per request.

A turn is settled when its state can no longer change on its own (an answered question, a complete
answer…). The session's `version`, bumped whenever a stored turn is edited, deleted, retried or
removed by the retention policy, keeps the cache honest across replicas; a session deleted outright
(forgotten) has no version to read, and its id is never given to another session. Settled turns come back as the same objects every time —
what the render memo relies on (bot/domain/memo.py).
"""
from __future__ import annotations

import threading
from collections import OrderedDict
from collections.abc import Collection, Sequence
from datetime import datetime

from sqlalchemy import select, update
from sqlalchemy.exc import IntegrityError

from ..domain.model import Attachment, Channel, Role, Turn, TurnStatus, Usage
from ..domain.queue import RETRYABLE, Waiting, held_by_any, lease_until, next_batch, reply_status
from ..domain.spend import Reservation
from ..services.ports import Batch, Submitted
from . import spend, statements as sql
from .work import Database
from .inbox import DELIVERY_DONE
from .moves import change_all
from .rows import (
    append,
    bump,
    in_channel,
    index,
    release_lease,
    settle,
    take_lease,
    to_session,
    to_turn,
    usage_values,
    with_attachments,
)
from .tables import sessions, turns


SETTLED = {Role.USER: {TurnStatus.ANSWERED},
           Role.ASSISTANT: {TurnStatus.COMPLETE, TurnStatus.INTERRUPTED, TurnStatus.ABORTED, TurnStatus.STOPPED},
           Role.SUMMARY: {TurnStatus.COMPLETE}, Role.COMPACTION: {TurnStatus.COMPLETE}}


class SettledTurns:
    """A session's settled prefix of turns, at one version."""

    def __init__(self, version: int):
        self.version = version
        self.upto = 0  # seq up to which `turns` is settled
        self.turns: list[Turn] = []

    def extend(self, fresh: list[Turn]) -> list[Turn]:
        """The whole history: the settled prefix, then `fresh` (turns read after it); the prefix grows
        by whatever of `fresh` has settled since."""
        history = self.turns + fresh
        settled = len(self.turns)
        while settled < len(history) and history[settled].status in SETTLED[history[settled].role]:
            settled += 1
        self.turns = history[:settled]
        self.upto = self.turns[-1].seq if self.turns else self.upto
        return history


class HistoryCache:
    """Settled turns of the most recently used sessions."""

    def __init__(self, size: int = 512):
        self.size = size
        self._items: OrderedDict[int, SettledTurns] = OrderedDict()
        self._lock = threading.Lock()

    def at(self, session_id: int, version: int) -> SettledTurns:
        with self._lock:
            cached = self._items.get(session_id)
        return cached if cached is not None and cached.version == version else SettledTurns(version)

    def forget(self, session_id: int) -> None:
        with self._lock:
            self._items.pop(session_id, None)

    def put(self, session_id: int, settled: SettledTurns) -> None:
        with self._lock:
            self._items[session_id] = settled
            self._items.move_to_end(session_id)
            while len(self._items) > self.size:
                self._items.popitem(last=False)


class SqlTurnQueue:
    def __init__(self, db: Database):
        self.db = db
        self._history = HistoryCache()

    def submit_turn(self, session_id: int, text: str, *, author_id: str, author_name: str | None,
                    slack_ts: str | None, channel: Channel | None, claim: str | None, owner: str,
                    lease_seconds: float, attachments: Sequence[Attachment] = (),
                    delivery: str | None = None) -> Submitted:
        now = self.db.now()
        try:
            with self.db.writing() as conn:
                if claim:
                    conn.execute(sql.CLAIM, {"key": claim, "created_at": now})
                if delivery:
                    conn.execute(DELIVERY_DONE, {"done_key": delivery, "now": now})
                row = conn.execute(sql.SEQ_AND_LEASE, {"session_id": session_id, "owner": owner, "now": now,
                                                       "until": lease_until(now, lease_seconds)}).one()
                leased = row.lease_owner == owner  # then row.next_seq is the reply's, reserved
                self._store(conn, session_id, Role.USER, text, TurnStatus.PENDING, author_id=author_id,
                            author_name=author_name, slack_ts=slack_ts, channel=channel, attachments=attachments,
                            seq=row.next_seq - 1 if leased else row.next_seq)
                if not leased:
                    return Submitted(stored=True)
                return Submitted(stored=True, batch=self._batch(conn, session_id, owner, now, row, row.next_seq))
        except IntegrityError:
            if claim:
                return Submitted(stored=False)
            raise

    def append_turn(self, session_id: int, role: Role, text: str, status: TurnStatus, *,
                    author_id: str | None = None, author_name: str | None = None,
                    slack_ts: str | None = None, usage: Usage = Usage(), channel: Channel | None = None,
                    attachments: Sequence[Attachment] = ()) -> Turn:
        with self.db.writing() as conn:
            return self._store(conn, session_id, role, text, status, author_id=author_id, author_name=author_name,
                               slack_ts=slack_ts, usage=usage, channel=channel, attachments=attachments)

    def _store(self, conn, session_id: int, role: Role, text: str, status: TurnStatus, *, author_id, author_name,
               slack_ts, channel, usage: Usage = Usage(), attachments: Sequence[Attachment] = (),
               seq: int | None = None) -> Turn:
        turn = append(conn, self.db.now(), session_id, role, text, status, author_id=author_id,
                      author_name=author_name, slack_ts=slack_ts, usage=usage, attachments=attachments, seq=seq)
        if slack_ts and channel:
            index(conn, channel, slack_ts, session_id)
        return turn

    def next_answer(self, session_id: int, owner: str, lease_seconds: float) -> Batch | None:
        now = self.db.now()
        with self.db.writing() as conn:
            return self._renew_and_batch(conn, session_id, owner, lease_seconds, now)

    def record_reply(self, reply: Turn, pending: Sequence[Turn], text: str, usage: Usage,
                     posted: Sequence[str], channel: Channel | None, owner: str,
                     lease_seconds: float, stopped: bool = False, stop_reason: str | None = None,
                     reservation: Reservation | None = None) -> Batch | None:
        """With a channel, every message of the answer is indexed for reactions."""
        now = self.db.now()
        with self.db.writing() as conn:
            row = _renew(conn, reply.session_id, owner, lease_seconds, now)
            if row is None:
                spend.release(conn, reservation)
                return None  # taken over: the new holder answers these turns
            status = reply_status(stopped, stop_reason)
            conn.execute(sql.FINISH_REPLY, {"turn_id": reply.id, "text": text, "status": status.value,
                                            "stopped": stopped, "slack_ts": posted[0] if posted else None,
                                            "stop_reason": stop_reason, **usage_values(usage)})
            settle(conn, pending, TurnStatus.DECLINED if status is TurnStatus.DECLINED else TurnStatus.ANSWERED)
            for ts in posted if channel else ():
                index(conn, channel, ts, reply.session_id)
            following = self._batch(conn, reply.session_id, owner, now, row)
            # last: the day's row is locked till commit; a private fork's cost is its channel's
            spend.add(conn, row.team_id, row.private_of or row.channel_id, now, usage, row.kind == "fork")
            spend.release(conn, reservation)  # settled: the real cost replaces the worst case
            return following

    def abort_reply(self, reply: Turn, pending: Sequence[Turn], owner: str, lease_seconds: float,
                    reservation: Reservation | None = None) -> Batch | None:
        now = self.db.now()
        with self.db.writing() as conn:
            row = _renew(conn, reply.session_id, owner, lease_seconds, now)
            spend.release(conn, reservation)
            if row is None:
                return None
            conn.execute(update(turns).where(turns.c.id == reply.id).values(status=TurnStatus.ABORTED.value))
            settle(conn, pending, TurnStatus.FAILED)
            return self._batch(conn, reply.session_id, owner, now, row)

    def _renew_and_batch(self, conn, session_id: int, owner: str, lease_seconds: float,
                         now: datetime) -> Batch | None:
        row = _renew(conn, session_id, owner, lease_seconds, now)
        return None if row is None else self._batch(conn, session_id, owner, now, row)

    def _batch(self, conn, session_id: int, owner: str, now: datetime, row=None,
               reply_seq: int | None = None) -> Batch | None:
        """The next batch as the domain decides it (bot/domain/queue.py: next_batch), its turns each
        counted as one more attempt, a reply reserved for it. `row`: the session's, if just read;
        `reply_seq`: the reply's seq, if reserved with the submitted turn's."""
        row = row if row is not None else conn.execute(sql.SESSION, {"session_id": session_id}).one()
        session = to_session(row)
        rows = conn.execute(sql.PENDING, {"session_id": session_id}).all()
        batch = next_batch([Waiting(to_turn(r), r.attempts) for r in rows], session)
        if batch.failed:
            settle(conn, batch.failed, TurnStatus.FAILED)
        if batch.release:
            release_lease(conn, session_id, owner)
            return Batch(session, [], None, [], batch.given_up) if batch.given_up else None
        conn.execute(sql.COUNT_ATTEMPT, {"ids": [t.id for t in batch.answer]})
        reply = append(conn, now, session_id, Role.ASSISTANT, "", TurnStatus.STREAMING, seq=reply_seq)
        history = self._history_in(conn, session_id, row.version or 0)
        return Batch(session, batch.answer, reply, history, batch.given_up)

    def lease(self, session_id: int, owner: str, seconds: float) -> bool:
        with self.db.writing() as conn:
            return take_lease(conn, session_id, owner, self.db.now(), seconds)

    def release(self, session_id: int, owner: str) -> None:
        with self.db.writing() as conn:
            release_lease(conn, session_id, owner)

    def renew_leases(self, owners: Collection[str], seconds: float) -> None:
        if owners:
            with self.db.writing() as conn:
                change_all(conn, [held_by_any(owners)], {"lease_until": lease_until(self.db.now(), seconds)})

    def release_leases(self, owners: Collection[str]) -> None:
        if owners:
            with self.db.writing() as conn:
                change_all(conn, [held_by_any(owners)], {"lease_owner": None, "lease_until": None})

    def turns(self, session_id: int, upto_seq: int | None = None) -> list[Turn]:
        with self.db.reading() as conn:
            version = conn.execute(sql.VERSION, {"session_id": session_id}).scalar()
            if version is None:  # deleted, here or by another process: nothing of it may be served
                self._history.forget(session_id)
                return []
            history = self._history_in(conn, session_id, version)
        return history if upto_seq is None else [t for t in history if t.seq <= upto_seq]

    def _history_in(self, conn, session_id: int, version: int) -> list[Turn]:
        settled = self._history.at(session_id, version)
        rows = conn.execute(sql.TURNS_AFTER, {"session_id": session_id, "after": settled.upto}).all()
        history = settled.extend(with_attachments(conn, [to_turn(r) for r in rows], rows))
        self._history.put(session_id, settled)
        return history

    def edit_turn(self, channel: Channel, ts: str, author_id: str, text: str) -> bool:
        return self._change(channel, ts, author_id, text=text)

    def delete_turn(self, channel: Channel, ts: str) -> bool:
        return self._change(channel, ts, None, deleted=True)

    def _change(self, channel: Channel, ts: str, author_id: str | None, **values) -> bool:
        query = update(turns).where(turns.c.slack_ts == ts, turns.c.role == Role.USER.value,
                                    turns.c.session_id.in_(select(sessions.c.id).where(in_channel(channel))))
        if author_id:
            query = query.where(turns.c.author_id == author_id)
        with self.db.writing() as conn:
            changed = conn.execute(query.values(**values).returning(turns.c.session_id)).scalars().all()
            bump(conn, set(changed))
            return bool(changed)

    def retry_turn(self, channel: Channel, ts: str) -> int | None:
        with self.db.writing() as conn:
            row = conn.execute(
                update(turns)
                .where(turns.c.slack_ts == ts, turns.c.status == RETRYABLE.value,
                       turns.c.session_id.in_(select(sessions.c.id).where(in_channel(channel))))
                .values(status=TurnStatus.PENDING.value, attempts=0)
                .returning(turns.c.session_id)
            ).first()
            if row:
                bump(conn, {row.session_id})
            return row.session_id if row else None


def _renew(conn, session_id: int, owner: str, seconds: float, now: datetime):
    """Renew the holder's lease, stamping the session's activity; locks its row before anything else
    is read. The session's row as it is now, or None: the caller no longer holds it."""
    return conn.execute(sql.RENEW_LEASE, {"session_id": session_id, "owner": owner, "now": now,
                                          "until": lease_until(now, seconds)}).first()
