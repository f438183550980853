"""The repository: every read and write Threadfork makes, each in its own short transaction."""
from __future__ import annotations

import threading
from collections import OrderedDict
from collections.abc import Callable, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from datetime import datetime, timedelta, timezone
from decimal import Decimal

from sqlalchemy import Engine, exists, func, insert, or_, select, update
from sqlalchemy.exc import IntegrityError

from ..domain.model import (
    ChannelEconomy,
    ContextSize,
    Fork,
    ForkStats,
    ForkStatus,
    Mode,
    Role,
    Session,
    Turn,
    TurnStatus,
    Usage,
)
from ..domain.context import ESTIMATED_CHARS_PER_TOKEN, UNSEEN
from . import statements as sql
from .engine import READ_ONLY, writer_queue
from .migrate import migrate
from .tables import messages, sessions, turns

Clock = Callable[[], datetime]


@dataclass(frozen=True)
class Batch:
    """Turns to answer in one model call, with the reply's reserved place and the session's history
    (pending turns and the reserved reply included)."""

    session: Session
    pending: list[Turn]
    reply: Turn
    history: list[Turn]


@dataclass(frozen=True)
class Submitted:
    """A user's turn handed in: `stored` is False for a duplicate; `batch` is set when this caller
    took the session's lease and must answer (and then keep answering until next_answer is None)."""

    stored: bool
    batch: Batch | None = None


def utcnow() -> datetime:
    return datetime.now(timezone.utc).replace(tzinfo=None)


class Store:
    def __init__(self, engine: Engine, clock: Clock = utcnow):
        self.engine = engine
        self.reader = engine.execution_options(**{READ_ONLY: True})  # for transactions that only read
        self._writer = writer_queue(engine)
        self.clock = clock
        self._parents: dict[str, int] = {}  # channel → parent session id; never changes once made
        self._history = _HistoryCache()

    @contextmanager
    def _writing(self):
        """A write transaction, queued for the writer before it takes a connection."""
        with self._writer, self.engine.begin() as conn:
            yield conn

    def create_schema(self) -> None:
        """Bring the database to the current schema (Alembic; safe with replicas starting together)."""
        migrate(self.engine)

    def ping(self) -> None:
        with self.engine.connect() as conn:
            conn.exec_driver_sql("SELECT 1")

    # idempotency ------------------------------------------------------------------------

    def claim(self, key: str) -> bool:
        """True for the first caller with this key, False for every later one (any replica)."""
        try:
            with self._writing() as conn:
                conn.execute(sql.CLAIM, {"key": key, "created_at": self.clock()})
            return True
        except IntegrityError:
            return False

    # sessions ---------------------------------------------------------------------------

    def parent_id(self, channel_id: str, team_id: str | None) -> int:
        if channel_id in self._parents:
            return self._parents[channel_id]
        self._parents[channel_id] = found = self._parent_id(channel_id, team_id)
        return found

    def _parent_id(self, channel_id: str, team_id: str | None) -> int:
        with self.reader.begin() as conn:
            found = conn.scalar(select(sessions.c.id).where(sessions.c.parent_key == channel_id))
            if found is not None:
                return found
        try:
            with self._writing() as conn:
                now = self.clock()
                return conn.execute(
                    insert(sessions)
                    .values(kind="parent", channel_id=channel_id, team_id=team_id, parent_key=channel_id,
                            status="open", created_at=now, last_activity_at=now)
                    .returning(sessions.c.id)
                ).scalar_one()
        except IntegrityError:  # another delivery created it first
            with self.reader.begin() as conn:
                return conn.scalar(select(sessions.c.id).where(sessions.c.parent_key == channel_id))

    def create_fork(self, channel_id: str, team_id: str | None, owner_id: str, mode: Mode, topic: str,
                    origin_ts: str | None = None) -> Fork:
        """A new open fork; from a message (`origin_ts`) its fork point is that message's turn."""
        parent = self.parent_id(channel_id, team_id)
        origin_seq = self.seq_at(parent, origin_ts) if origin_ts else None
        with self._writing() as conn:
            # the counter row lock serialises fork numbering and pins the fork point
            number = conn.execute(
                update(sessions)
                .where(sessions.c.id == parent)
                .values(next_fork_number=sessions.c.next_fork_number + 1)
                .returning(sessions.c.next_fork_number, sessions.c.next_seq)
            ).one()
            fork_point = number.next_seq if origin_seq is None else origin_seq
            fork_point = fork_point if (mode is Mode.INHERIT and fork_point > 0) else None
            now = self.clock()
            fork_id = conn.execute(
                insert(sessions)
                .values(kind="fork", channel_id=channel_id, team_id=team_id, parent_id=parent,
                        number=number.next_fork_number, mode=mode.value, topic=topic, owner_id=owner_id,
                        fork_point_seq=fork_point, status=ForkStatus.OPEN.value, origin_ts=origin_ts,
                        created_at=now, last_activity_at=now)
                .returning(sessions.c.id)
            ).scalar_one()
            return _fork(conn.execute(select(sessions).where(sessions.c.id == fork_id)).one())

    def set_root(self, fork_id: int, root_ts: str, inherited: ContextSize) -> None:
        with self._writing() as conn:
            conn.execute(update(sessions).where(sessions.c.id == fork_id).values(
                root_ts=root_ts, inherited_turns=inherited.turns, inherited_tokens=inherited.tokens))
            row = conn.execute(select(sessions.c.channel_id).where(sessions.c.id == fork_id)).one()
            _index(conn, row.channel_id, root_ts, fork_id)

    def session(self, session_id: int) -> Session:
        with self.reader.begin() as conn:
            return _session(conn.execute(select(sessions).where(sessions.c.id == session_id)).one())

    def fork(self, fork_id: int) -> Fork | None:
        with self.reader.begin() as conn:
            row = conn.execute(select(sessions).where(sessions.c.id == fork_id, sessions.c.kind == "fork")).first()
            return _fork(row) if row else None

    def fork_by_number(self, channel_id: str, number: int) -> Fork | None:
        with self.reader.begin() as conn:
            row = conn.execute(
                select(sessions).where(sessions.c.channel_id == channel_id, sessions.c.number == number,
                                       sessions.c.kind == "fork")
            ).first()
            return _fork(row) if row else None

    def fork_by_message(self, channel_id: str, ts: str) -> Fork | None:
        with self.reader.begin() as conn:
            row = conn.execute(
                select(sessions)
                .join(messages, messages.c.session_id == sessions.c.id)
                .where(messages.c.channel_id == channel_id, messages.c.ts == ts, sessions.c.kind == "fork")
            ).first()
            return _fork(row) if row else None

    def open_forks(self, channel_id: str) -> list[Fork]:
        return self.forks_in(channel_id, ForkStatus.OPEN)

    def latest_open_fork_of(self, channel_id: str, user_id: str) -> Fork | None:
        """The caller's most recently active open fork: one they opened or wrote in."""
        with self.reader.begin() as conn:
            row = conn.execute(
                select(sessions)
                .where(sessions.c.channel_id == channel_id, sessions.c.kind == "fork",
                       sessions.c.status == ForkStatus.OPEN.value, _involves(user_id))
                .order_by(sessions.c.last_activity_at.desc(), sessions.c.id.desc())
            ).first()
            return _fork(row) if row else None

    def seq_at(self, session_id: int, ts: str) -> int:
        """The seq of the session's last turn posted at or before Slack time `ts` (0: none)."""
        target = Decimal(ts)
        with self.reader.begin() as conn:
            rows = conn.execute(
                select(turns.c.seq, turns.c.slack_ts)
                .where(turns.c.session_id == session_id, turns.c.slack_ts.is_not(None))
                .order_by(turns.c.seq.desc())
            )
            for row in rows:
                if Decimal(row.slack_ts) <= target:
                    return row.seq
        return 0

    # edits and deletions ----------------------------------------------------------------

    def edit_turn(self, channel_id: str, ts: str, author_id: str, text: str) -> bool:
        """A person edited their message: the stored turn takes the new text."""
        return self._change_turn(channel_id, ts, author_id, text=text)

    def delete_turn(self, channel_id: str, ts: str) -> bool:
        """A deleted message leaves its session's future context."""
        return self._change_turn(channel_id, ts, None, deleted=True)

    def _change_turn(self, channel_id: str, ts: str, author_id: str | None, **values) -> bool:
        in_channel = select(sessions.c.id).where(sessions.c.channel_id == channel_id)
        query = update(turns).where(turns.c.slack_ts == ts, turns.c.role == Role.USER.value,
                                    turns.c.session_id.in_(in_channel))
        if author_id:
            query = query.where(turns.c.author_id == author_id)
        with self._writing() as conn:
            changed = conn.execute(query.values(**values).returning(turns.c.session_id)).scalars().all()
            _bump(conn, set(changed))
            return bool(changed)

    # listings ---------------------------------------------------------------------------

    def forks_in(self, channel_id: str, status: ForkStatus) -> list[Fork]:
        with self.reader.begin() as conn:
            rows = conn.execute(
                select(sessions).where(sessions.c.channel_id == channel_id, sessions.c.kind == "fork",
                                       sessions.c.status == status.value).order_by(sessions.c.number)
            ).all()
            return [_fork(r) for r in rows]

    def fork_counts(self, channel_id: str) -> dict[ForkStatus, int]:
        with self.reader.begin() as conn:
            rows = conn.execute(
                select(sessions.c.status, func.count())
                .where(sessions.c.channel_id == channel_id, sessions.c.kind == "fork")
                .group_by(sessions.c.status)
            )
            return {ForkStatus(status): count for status, count in rows}

    def open_forks_of(self, user_id: str) -> list[Fork]:
        """Open forks, in any channel, that the user opened or wrote in."""
        with self.reader.begin() as conn:
            rows = conn.execute(
                select(sessions)
                .where(sessions.c.kind == "fork", sessions.c.status == ForkStatus.OPEN.value, _involves(user_id))
                .order_by(sessions.c.last_activity_at.desc())
            ).all()
            return [_fork(r) for r in rows]

    def economy(self) -> list[ChannelEconomy]:
        """Per channel: tokens burned in forks against tokens summaries returned to parents."""
        with self.reader.begin() as conn:
            burned = dict(conn.execute(
                select(sessions.c.channel_id, func.sum(_usage_total(turns)))
                .join(turns, turns.c.session_id == sessions.c.id)
                .where(sessions.c.kind == "fork")
                .group_by(sessions.c.channel_id)
            ).all())
            returned = dict(conn.execute(
                select(sessions.c.channel_id, func.sum(turns.c.output_tokens))
                .join(turns, turns.c.session_id == sessions.c.id)
                .where(turns.c.role == Role.SUMMARY.value)
                .group_by(sessions.c.channel_id)
            ).all())
        channels = sorted(set(burned) | set(returned))
        return [ChannelEconomy(c, int(burned.get(c) or 0), int(returned.get(c) or 0)) for c in channels]

    # merge state machine: open → merging → merged (or open → abandoned) ---------------

    def begin_merge(self, fork_id: int, user_id: str, lease_seconds: float,
                    idle_before: datetime | None = None) -> bool:
        """Claim the fork for merging. With `idle_before`, only if it has been idle since then."""
        extra = [sessions.c.last_activity_at <= idle_before] if idle_before else []
        return self._move(fork_id, ForkStatus.OPEN, ForkStatus.MERGING, *extra, merged_by=user_id,
                          merge_until=self.clock() + timedelta(seconds=lease_seconds))

    def cancel_merge(self, fork_id: int) -> bool:
        return self._move(fork_id, ForkStatus.MERGING, ForkStatus.OPEN, merged_by=None, merge_until=None)

    def abandon(self, fork_id: int, idle_before: datetime | None = None) -> bool:
        extra = [sessions.c.last_activity_at <= idle_before] if idle_before else []
        return self._move(fork_id, ForkStatus.OPEN, ForkStatus.ABANDONED, *extra)

    def complete_merge(self, fork: Fork, parent_text: str, summary: str, usage: Usage) -> Turn:
        """Append the summary to the parent and mark the fork merged, in one transaction. The raw
        summary stays on the fork until it has been posted, so a crash cannot lose it."""
        with self._writing() as conn:
            moved = conn.execute(
                update(sessions)
                .where(sessions.c.id == fork.id, sessions.c.status == ForkStatus.MERGING.value)
                .values(status=ForkStatus.MERGED.value, summary=summary, summary_tokens=usage.output_tokens)
            ).rowcount
            if moved != 1:
                raise RuntimeError(f"fork {fork.id} left the merging state")
            return _append(conn, self.clock(), fork.parent_id, Role.SUMMARY, parent_text, TurnStatus.COMPLETE,
                           usage=usage, source_fork_id=fork.id)

    def set_summary_ts(self, fork_id: int, ts: str) -> None:
        with self._writing() as conn:
            conn.execute(update(sessions).where(sessions.c.id == fork_id).values(summary_ts=ts, merge_until=None))

    def summary_of(self, fork_id: int) -> str:
        """The merged fork's raw summary (its size is in `stats`)."""
        with self.reader.begin() as conn:
            return conn.scalar(select(sessions.c.summary).where(sessions.c.id == fork_id)) or ""

    def stuck_merges(self) -> list[Fork]:
        """Merges whose worker died: still merging, or merged but never announced, lease expired."""
        with self.reader.begin() as conn:
            rows = conn.execute(
                select(sessions).where(
                    sessions.c.kind == "fork", sessions.c.merge_until < self.clock(),
                    or_(sessions.c.status == ForkStatus.MERGING.value,
                        (sessions.c.status == ForkStatus.MERGED.value) & sessions.c.summary_ts.is_(None)))
            ).all()
            return [_fork(r) for r in rows]

    def reclaim_merge(self, fork_id: int, lease_seconds: float) -> bool:
        """Take over a stuck merge; exactly one sweeper wins."""
        now = self.clock()
        with self._writing() as conn:
            return conn.execute(
                update(sessions)
                .where(sessions.c.id == fork_id, sessions.c.merge_until < now,
                       sessions.c.status.in_([ForkStatus.MERGING.value, ForkStatus.MERGED.value]),
                       sessions.c.summary_ts.is_(None))
                .values(merge_until=now + timedelta(seconds=lease_seconds))
            ).rowcount == 1

    def _move(self, fork_id: int, source: ForkStatus, target: ForkStatus, *conditions, **values) -> bool:
        with self._writing() as conn:
            return conn.execute(
                update(sessions)
                .where(sessions.c.id == fork_id, sessions.c.status == source.value, *conditions)
                .values(status=target.value, **values)
            ).rowcount == 1

    # compaction -------------------------------------------------------------------------

    def sessions_over(self, tokens: int) -> list[int]:
        """Sessions whose latest answer reported a context of at least `tokens`, not compacted since."""
        answer, other, compaction = turns.alias("answer"), turns.alias("other"), turns.alias("compaction")
        latest = (select(func.max(other.c.seq))
                  .where(other.c.session_id == answer.c.session_id, other.c.role == Role.ASSISTANT.value,
                         other.c.status == TurnStatus.COMPLETE.value)
                  .scalar_subquery())
        compacted_since = exists().where(compaction.c.session_id == answer.c.session_id,
                                         compaction.c.role == Role.COMPACTION.value,
                                         compaction.c.seq > answer.c.seq)
        size = _usage_total(answer)
        with self.reader.begin() as conn:
            return list(conn.scalars(
                select(answer.c.session_id)
                .where(answer.c.role == Role.ASSISTANT.value, answer.c.seq == latest, size >= tokens,
                       ~compacted_since)
            ))

    def add_compaction(self, session_id: int, text: str, covers_seq: int, usage: Usage) -> Turn:
        with self._writing() as conn:
            turn = _append(conn, self.clock(), session_id, Role.COMPACTION, text, TurnStatus.COMPLETE, usage=usage)
            conn.execute(update(turns).where(turns.c.id == turn.id).values(covers_seq=covers_seq))
            return Turn(**{**turn.__dict__, "covers_seq": covers_seq})

    # lifecycle --------------------------------------------------------------------------

    def idle_forks(self, idle_before: datetime, unreminded: bool = False) -> list[Fork]:
        query = select(sessions).where(sessions.c.kind == "fork", sessions.c.status == ForkStatus.OPEN.value,
                                       sessions.c.last_activity_at <= idle_before)
        if unreminded:
            query = query.where(sessions.c.reminded_at.is_(None))
        with self.reader.begin() as conn:
            return [_fork(r) for r in conn.execute(query.order_by(sessions.c.id)).all()]

    def claim_reminder(self, fork_id: int, idle_before: datetime) -> bool:
        """At most one reminder per fork, whichever replica gets here first."""
        with self._writing() as conn:
            return conn.execute(
                update(sessions)
                .where(sessions.c.id == fork_id, sessions.c.status == ForkStatus.OPEN.value,
                       sessions.c.reminded_at.is_(None), sessions.c.last_activity_at <= idle_before)
                .values(reminded_at=self.clock())
            ).rowcount == 1

    def raise_budget(self, fork_id: int, by: int) -> None:
        with self._writing() as conn:
            conn.execute(update(sessions).where(sessions.c.id == fork_id)
                         .values(budget_extra=sessions.c.budget_extra + by))

    def budget_extra(self, fork_id: int) -> int:
        with self.reader.begin() as conn:
            return conn.scalar(select(sessions.c.budget_extra).where(sessions.c.id == fork_id)) or 0

    def stalled_sessions(self, created_before: datetime) -> list[int]:
        """Sessions nobody is answering although a turn waits, or an answer was cut off."""
        now = self.clock()
        waiting = exists().where(
            turns.c.session_id == sessions.c.id,
            or_(turns.c.status == TurnStatus.STREAMING.value,
                (turns.c.status == TurnStatus.PENDING.value) & (turns.c.created_at <= created_before)))
        with self.reader.begin() as conn:
            return list(conn.scalars(
                select(sessions.c.id).where(waiting, or_(sessions.c.lease_until.is_(None),
                                                         sessions.c.lease_until < now))
            ))

    def interrupt_streaming(self, session_id: int) -> int:
        """Answers left half-written by a dead worker leave the context; returns how many."""
        with self._writing() as conn:
            return conn.execute(
                update(turns)
                .where(turns.c.session_id == session_id, turns.c.status == TurnStatus.STREAMING.value)
                .values(status=TurnStatus.ABORTED.value)
            ).rowcount

    def retry_turn(self, channel_id: str, ts: str) -> int | None:
        """A failed user turn (by its Slack ts) goes back to pending; returns its session."""
        in_channel = select(sessions.c.id).where(sessions.c.channel_id == channel_id)
        with self._writing() as conn:
            row = conn.execute(
                update(turns)
                .where(turns.c.slack_ts == ts, turns.c.status == TurnStatus.FAILED.value,
                       turns.c.session_id.in_(in_channel))
                .values(status=TurnStatus.PENDING.value)
                .returning(turns.c.session_id)
            ).first()
            if row:
                _bump(conn, {row.session_id})
            return row.session_id if row else None

    # turns ------------------------------------------------------------------------------

    def append_turn(self, session_id: int, role: Role, text: str, status: TurnStatus, *,
                    author_id: str | None = None, author_name: str | None = None,
                    slack_ts: str | None = None, usage: Usage = Usage(), channel_id: str | None = None) -> Turn:
        with self._writing() as conn:
            return self._store_turn(conn, session_id, role, text, status, author_id=author_id,
                                    author_name=author_name, slack_ts=slack_ts, usage=usage,
                                    channel_id=channel_id, claim=None)

    def submit_turn(self, session_id: int, text: str, *, author_id: str, author_name: str | None,
                    slack_ts: str | None, channel_id: str | None, claim: str | None, owner: str,
                    lease_seconds: float) -> Submitted:
        """Store a user's turn as pending and try to lease the session, in one transaction; the
        lease winner gets its first batch from the same transaction (see `next_answer`)."""
        now = self.clock()
        try:
            with self._writing() as conn:
                self._store_turn(conn, session_id, Role.USER, text, TurnStatus.PENDING, author_id=author_id,
                                 author_name=author_name, slack_ts=slack_ts, channel_id=channel_id, claim=claim)
                if not _lease(conn, session_id, owner, now, lease_seconds):
                    return Submitted(stored=True)
                return Submitted(stored=True, batch=self._batch_in(conn, session_id, owner, now))
        except IntegrityError:
            if claim:
                return Submitted(stored=False)
            raise

    def _store_turn(self, conn, session_id: int, role: Role, text: str, status: TurnStatus, *, author_id,
                    author_name, slack_ts, usage: Usage = Usage(), channel_id, claim) -> Turn:
        if claim:
            conn.execute(sql.CLAIM, {"key": claim, "created_at": self.clock()})
        turn = _append(conn, self.clock(), session_id, role, text, status, author_id=author_id,
                       author_name=author_name, slack_ts=slack_ts, usage=usage)
        if slack_ts and channel_id:
            _index(conn, channel_id, slack_ts, session_id)
        return turn

    def turns(self, session_id: int, upto_seq: int | None = None) -> list[Turn]:
        """A session's stored turns in order (deleted ones left out)."""
        with self.reader.begin() as conn:
            history = self._history_in(conn, session_id)
        return history if upto_seq is None else [t for t in history if t.seq <= upto_seq]

    def _history_in(self, conn, session_id: int, version: int | None = None) -> list[Turn]:
        """Turns whose state is final are kept in memory, so a long session costs one small query
        per request; the session's version, bumped whenever a stored turn is edited, deleted or
        retried, keeps it honest across replicas."""
        cached = self._history.get(session_id)
        if version is None:
            version = conn.scalar(sql.VERSION, {"session_id": session_id}) or 0
        if cached is None or cached.version != version:
            cached = _History(version)
        rows = conn.execute(sql.TURNS_AFTER, {"session_id": session_id, "after": cached.settled})
        history = cached.extend([_turn(r) for r in rows])
        self._history.put(session_id, cached)
        return history

    def next_answer(self, session_id: int, owner: str, lease_seconds: float) -> Batch | None:
        """For the lease holder, in one transaction: the turns waiting for an answer, with the
        reply's place reserved (so a message arriving meanwhile comes after it) and the lease
        renewed; or, when none wait, the lease released. None also when the lease was lost.
        Renewing first locks the session row, so a turn submitted concurrently is either seen here
        or finds the lease free."""
        now = self.clock()
        with self._writing() as conn:
            return self._next_in(conn, session_id, owner, lease_seconds, now)

    def _next_in(self, conn, session_id: int, owner: str, lease_seconds: float, now: datetime) -> Batch | None:
        # renewing also stamps the session's activity, and locks its row before pending is read
        renewed = conn.execute(sql.RENEW_LEASE, {"session_id": session_id, "owner": owner, "now": now,
                                                 "until": now + timedelta(seconds=lease_seconds)}).rowcount
        return self._batch_in(conn, session_id, owner, now) if renewed else None

    def _batch_in(self, conn, session_id: int, owner: str, now: datetime) -> Batch | None:
        row = conn.execute(sql.SESSION, {"session_id": session_id}).one()
        session = _session(row)
        pending = [_turn(r) for r in conn.execute(sql.PENDING, {"session_id": session_id})]
        if pending and not session.answerable:
            _settle(conn, pending, TurnStatus.FAILED)
            pending = []
        if not pending:
            _release(conn, session_id, owner)
            return None
        reply = _append(conn, now, session_id, Role.ASSISTANT, "", TurnStatus.STREAMING)
        return Batch(session, pending, reply, self._history_in(conn, session_id, row.version or 0))

    def record_reply(self, reply: Turn, pending: Sequence[Turn], text: str, usage: Usage,
                     posted: Sequence[str], channel_id: str | None, owner: str,
                     lease_seconds: float) -> Batch | None:
        """Store the answer (with the ts of its first message) and mark its user turns answered;
        with a channel id, every message of the answer is indexed for reactions. In the same
        transaction, the lease holder's next batch (see `next_answer`)."""
        now = self.clock()
        with self._writing() as conn:
            conn.execute(sql.FINISH_REPLY, {
                "turn_id": reply.id, "text": text, "slack_ts": posted[0] if posted else None,
                "input_tokens": usage.input_tokens, "output_tokens": usage.output_tokens,
                "cache_read_tokens": usage.cache_read_tokens, "cache_write_tokens": usage.cache_write_tokens})
            _settle(conn, pending, TurnStatus.ANSWERED)
            for ts in posted if channel_id else ():
                _index(conn, channel_id, ts, reply.session_id)
            return self._next_in(conn, reply.session_id, owner, lease_seconds, now)

    def abort_reply(self, reply: Turn, pending: Sequence[Turn], owner: str, lease_seconds: float) -> Batch | None:
        """The call failed: the answer is dropped from the context, the user turns stay, marked
        failed; then, in the same transaction, the lease holder's next batch."""
        now = self.clock()
        with self._writing() as conn:
            conn.execute(update(turns).where(turns.c.id == reply.id).values(status=TurnStatus.ABORTED.value))
            _settle(conn, pending, TurnStatus.FAILED)
            return self._next_in(conn, reply.session_id, owner, lease_seconds, now)

    # leases: one worker answers a session at a time, across threads and replicas -----------

    def lease(self, session_id: int, owner: str, seconds: float) -> bool:
        with self._writing() as conn:
            return _lease(conn, session_id, owner, self.clock(), seconds)

    def release(self, session_id: int, owner: str) -> None:
        with self._writing() as conn:
            _release(conn, session_id, owner)

    # accounting -------------------------------------------------------------------------

    def stats(self, fork_id: int) -> ForkStats:
        with self.reader.begin() as conn:
            row = conn.execute(
                select(
                    func.count(turns.c.id).filter(turns.c.role.in_([Role.USER.value, Role.ASSISTANT.value])),
                    *(func.coalesce(func.sum(c), 0) for c in _usage_columns(turns)),
                ).where(turns.c.session_id == fork_id, turns.c.deleted.is_(False),
                        turns.c.status.not_in([s.value for s in UNSEEN]))
            ).one()
            summary_tokens = conn.scalar(select(sessions.c.summary_tokens).where(sessions.c.id == fork_id))
            return ForkStats(turns=row[0], burned=Usage(*(int(v) for v in row[1:])),
                             summary_tokens=summary_tokens or 0)

    def context_size(self, session_id: int, upto_seq: int | None = None) -> ContextSize:
        """Turns and tokens the model sees (up to `upto_seq`): the last reply's reported usage plus
        estimates after it. A few indexed queries, whatever the session's length (a fork is cheap)."""
        seen = [s.value for s in UNSEEN]
        in_range = (turns.c.session_id == session_id, turns.c.deleted.is_(False), turns.c.status.not_in(seen),
                    *([turns.c.seq <= upto_seq] if upto_seq is not None else []))
        usage_total = _usage_total(turns)
        with self.reader.begin() as conn:
            covers = conn.scalar(select(func.max(turns.c.covers_seq)).where(
                *in_range, turns.c.role == Role.COMPACTION.value))
            after_compaction = turns.c.seq > (covers or 0)
            count = conn.scalar(select(func.count()).where(*in_range, after_compaction,
                                                          turns.c.role != Role.COMPACTION.value))
            last = conn.execute(
                select(turns.c.seq, usage_total.label("total"))
                .where(*in_range, turns.c.role == Role.ASSISTANT.value, usage_total > 0)
                .order_by(turns.c.seq.desc()).limit(1)
            ).first()
            since = last.seq if last else 0
            chars = conn.scalar(select(func.coalesce(func.sum(func.length(turns.c.text)), 0)).where(
                *in_range, turns.c.seq > since, turns.c.role != Role.COMPACTION.value)) or 0
        tokens = (last.total if last else 0) + int(chars) // ESTIMATED_CHARS_PER_TOKEN
        return ContextSize(turns=count + (1 if covers else 0), tokens=tokens)


FINAL = {Role.USER: {TurnStatus.ANSWERED}, Role.ASSISTANT: {TurnStatus.COMPLETE, TurnStatus.INTERRUPTED,
                                                               TurnStatus.ABORTED},
         Role.SUMMARY: {TurnStatus.COMPLETE}, Role.COMPACTION: {TurnStatus.COMPLETE}}


class _History:
    """A session's turns whose state can no longer change (a settled prefix), at one version."""

    def __init__(self, version: int):
        self.version = version
        self.settled = 0  # seq up to which `turns` is final
        self.turns: list[Turn] = []

    def extend(self, fresh: list[Turn]) -> list[Turn]:
        history = self.turns + fresh
        final = len(self.turns)
        while final < len(history) and history[final].status in FINAL[history[final].role]:
            final += 1
        self.turns = history[:final]
        self.settled = self.turns[-1].seq if self.turns else self.settled
        return history


class _HistoryCache:
    def __init__(self, size: int = 512):
        self.size = size
        self._items: OrderedDict[int, _History] = OrderedDict()
        self._lock = threading.Lock()

    def get(self, session_id: int) -> _History | None:
        with self._lock:
            return self._items.get(session_id)

    def put(self, session_id: int, history: _History) -> None:
        with self._lock:
            self._items[session_id] = history
            self._items.move_to_end(session_id)
            while len(self._items) > self.size:
                self._items.popitem(last=False)


def _bump(conn, session_ids: set[int]) -> None:
    if session_ids:
        conn.execute(update(sessions).where(sessions.c.id.in_(session_ids)).values(version=sessions.c.version + 1))


def _settle(conn, pending: Sequence[Turn], status: TurnStatus) -> None:
    conn.execute(sql.SETTLE, {"ids": [t.id for t in pending], "status": status.value})


def _lease(conn, session_id: int, owner: str, now: datetime, seconds: float) -> bool:
    until = now + timedelta(seconds=seconds)
    return conn.execute(sql.TAKE_LEASE, {"session_id": session_id, "owner": owner, "now": now,
                                         "until": until}).rowcount == 1


def _release(conn, session_id: int, owner: str) -> None:
    conn.execute(sql.RELEASE_LEASE, {"session_id": session_id, "owner": owner})


def _usage_columns(table):
    """In Usage's field order."""
    return (table.c.input_tokens, table.c.output_tokens, table.c.cache_read_tokens, table.c.cache_write_tokens)


def _usage_total(table):
    """Everything a model call read and wrote (Usage.total), as SQL."""
    inputs, outputs, cache_reads, cache_writes = _usage_columns(table)
    return inputs + outputs + cache_reads + cache_writes


def _involves(user_id: str):
    """A session the user opened or wrote in."""
    wrote = exists().where(turns.c.session_id == sessions.c.id, turns.c.author_id == user_id)
    return or_(sessions.c.owner_id == user_id, wrote)


def _append(conn, now: datetime, session_id: int, role: Role, text: str, status: TurnStatus, *,
            author_id=None, author_name=None, slack_ts=None, usage: Usage = Usage(), source_fork_id=None) -> Turn:
    seq = conn.execute(sql.NEXT_SEQ, {"session_id": session_id, "now": now}).scalar_one()
    turn_id = conn.execute(sql.INSERT_TURN, {
        "session_id": session_id, "seq": seq, "role": role.value, "text": text, "author_id": author_id,
        "author_name": author_name, "status": status.value, "slack_ts": slack_ts, "source_fork_id": source_fork_id,
        "input_tokens": usage.input_tokens, "output_tokens": usage.output_tokens,
        "cache_read_tokens": usage.cache_read_tokens, "cache_write_tokens": usage.cache_write_tokens,
        "deleted": False, "created_at": now}).scalar_one()
    return Turn(session_id, seq, role, text, author_id, author_name, status, usage, slack_ts, turn_id)


def _index(conn, channel_id: str, ts: str, session_id: int) -> None:
    if conn.scalar(sql.INDEXED, {"channel_id": channel_id, "ts": ts}) is None:
        conn.execute(sql.INDEX, {"channel_id": channel_id, "ts": ts, "session_id": session_id})


def _session(row) -> Session:
    return Session(id=row.id, channel_id=row.channel_id, team_id=row.team_id,
                   fork=_fork(row) if row.kind == "fork" else None)


def _turn(row) -> Turn:
    return Turn(
        session_id=row.session_id, seq=row.seq, role=Role(row.role), text=row.text,
        author_id=row.author_id, author_name=row.author_name, status=TurnStatus(row.status),
        usage=Usage(row.input_tokens, row.output_tokens, row.cache_read_tokens, row.cache_write_tokens),
        slack_ts=row.slack_ts, id=row.id, covers_seq=row.covers_seq,
    )


def _fork(row) -> Fork:
    return Fork(
        id=row.id, channel_id=row.channel_id, team_id=row.team_id, number=row.number, parent_id=row.parent_id,
        mode=Mode(row.mode), topic=row.topic or "", owner_id=row.owner_id, fork_point_seq=row.fork_point_seq,
        status=ForkStatus(row.status), root_ts=row.root_ts, merged_by=row.merged_by,
        summary_ts=row.summary_ts, last_activity_at=row.last_activity_at,
        inherited=ContextSize(row.inherited_turns or 0, row.inherited_tokens or 0), origin_ts=row.origin_ts,
    )

