"""The turn queue's repository: a session's turns and its lease, loaded and saved. Its use cases (a turn
handed in, the next batch, an answer recorded) are bot/services/queue.py's, each one unit of work.
Renewing the lease first locks the session row, so a turn submitted concurrently is either in the batch or
finds the lease free.

Each session's settled turns, kept in memory so a long session costs one small query per request.

A turn is settled when its state can no longer change on its own (an answered question, a complete
answer…). The session's `version`, bumped whenever a stored turn is edited, deleted, retried or
removed by the retention policy, keeps the cache honest across replicas; a session deleted outright
(forgotten) has no version to read, and its id is never given to another session. Settled turns come back as the same objects every time —
what the render memo relies on (bot/domain/caching.py).
"""
from __future__ import annotations

import threading
from collections import OrderedDict
from collections.abc import Collection, Sequence

from sqlalchemy import select, update

from ..domain.model import Attachment, Channel, Role, Turn, TurnStatus, Usage
from ..domain.queue import RETRYABLE, Waiting, held_by_any, lease_until
from ..services.ports import Held
from . import statements as sql
from .work import Database
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

    def enqueue(self, session_id: int, text: str, *, author_id: str, author_name: str | None,
                slack_ts: str | None, channel: Channel | None, owner: str, lease_seconds: float,
                attachments: Sequence[Attachment] = ()) -> Held | None:
        now = self.db.now()
        with self.db.writing() as conn:
            row = conn.execute(sql.SEQ_AND_LEASE, {"session_id": session_id, "owner": owner, "now": now,
                                                   "until": lease_until(now, lease_seconds)}).one()
            leased = row.lease_owner == owner  # then row.next_seq is the reply's, reserved
            self._store(conn, session_id, Role.USER, text, TurnStatus.PENDING, author_id=author_id,
                        author_name=author_name, slack_ts=slack_ts, channel=channel, attachments=attachments,
                        seq=row.next_seq - 1 if leased else row.next_seq)
            return Held(to_session(row), row.version or 0, row.next_seq) if leased else None

    def append_turn(self, session_id: int, role: Role, text: str, status: TurnStatus, *,
                    author_id: str | None = None, author_name: str | None = None,
                    slack_ts: str | None = None, usage: Usage = Usage(), channel: Channel | None = None,
                    attachments: Sequence[Attachment] = (), source_fork_id: int | None = None,
                    covers_seq: int | None = None) -> Turn:
        with self.db.writing() as conn:
            return self._store(conn, session_id, role, text, status, author_id=author_id, author_name=author_name,
                               slack_ts=slack_ts, usage=usage, channel=channel, attachments=attachments,
                               source_fork_id=source_fork_id, covers_seq=covers_seq)

    def _store(self, conn, session_id: int, role: Role, text: str, status: TurnStatus, *, author_id, author_name,
               slack_ts, channel, usage: Usage = Usage(), attachments: Sequence[Attachment] = (),
               seq: int | None = None, source_fork_id: int | None = None, covers_seq: int | None = None) -> Turn:
        turn = append(conn, self.db.now(), session_id, role, text, status, author_id=author_id,
                      author_name=author_name, slack_ts=slack_ts, usage=usage, attachments=attachments, seq=seq,
                      source_fork_id=source_fork_id, covers_seq=covers_seq)
        if slack_ts and channel:
            index(conn, channel, slack_ts, session_id)
        return turn

    def renew(self, session_id: int, owner: str, lease_seconds: float) -> Held | None:
        now = self.db.now()
        with self.db.writing() as conn:
            row = conn.execute(sql.RENEW_LEASE, {"session_id": session_id, "owner": owner, "now": now,
                                                 "until": lease_until(now, lease_seconds)}).first()
        return None if row is None else Held(to_session(row), row.version or 0)

    def waiting(self, session_id: int) -> list[Waiting]:
        with self.db.reading() as conn:
            return [Waiting(to_turn(r), r.attempts) for r in conn.execute(sql.PENDING, {"session_id": session_id})]

    def settle(self, turns: Collection[Turn], status: TurnStatus) -> None:
        if turns:
            with self.db.writing() as conn:
                settle(conn, list(turns), status)

    def start_reply(self, held: Held, answer: Collection[Turn]) -> Turn:
        with self.db.writing() as conn:
            conn.execute(sql.COUNT_ATTEMPT, {"ids": [t.id for t in answer]})
            return append(conn, self.db.now(), held.session.id, Role.ASSISTANT, "", TurnStatus.STREAMING,
                          seq=held.reply_seq)

    def history(self, held: Held) -> list[Turn]:
        with self.db.reading() as conn:
            return self._history_in(conn, held.session.id, held.version)

    def finish_reply(self, reply: Turn, text: str, usage: Usage, status: TurnStatus, posted: Collection[str],
                     channel: Channel | None, stop_reason: str | None = None) -> None:
        posted = list(posted)
        with self.db.writing() as conn:
            conn.execute(sql.FINISH_REPLY, {"turn_id": reply.id, "text": text, "status": status.value,
                                            "stopped": status is TurnStatus.STOPPED,
                                            "slack_ts": posted[0] if posted else None,
                                            "stop_reason": stop_reason, **usage_values(usage)})
            for ts in posted if channel else ():
                index(conn, channel, ts, reply.session_id)

    def abort_reply(self, reply: Turn) -> None:
        with self.db.writing() as conn:
            conn.execute(update(turns).where(turns.c.id == reply.id).values(status=TurnStatus.ABORTED.value))

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
