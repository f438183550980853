"""What comes in, once: the durable inbox, and once-only keys.

The durable inbox: what Slack delivered is recorded here before it is acknowledged.

A kept delivery carries a processing claim (`claimed_until`), renewed by the heartbeat while this
process works on it; once done (processed, or given up) its body is cleared in the same UPDATE and only
its key stays, a day, so a redelivery (Slack's retry, a replayed request) is turned away at the door:
people's words never outlive their processing here, whatever is forgotten later. One whose claim expired
unfinished (its process died) is taken by a sweep — one taker, by a conditional UPDATE — and replayed.

Once-only keys: the first INSERT of a key wins, every later one (any replica) finds the key taken and inserts
nothing (ON CONFLICT DO NOTHING: no error, so a claim lost inside a use case's unit of work leaves its transaction
usable — on PostgreSQL an error would abort it). Claims (deliveries, messages) matter for a day and are pruned;
markers are forever.
"""
from __future__ import annotations

from collections.abc import Collection
from datetime import datetime, timedelta

from sqlalchemy import bindparam, delete, insert, or_, select, update
from sqlalchemy.exc import DBAPIError, IntegrityError

from ..domain.model import Channel
from ..services.ports import Kept, Standing
from .work import Database
from .channels import read_standing
from .statements import for_each_database
from .tables import claims, inbox, markers

# every delivery's two writes, built once: kept before the ack, done (its body cleared) after
_KEEP = insert(inbox)
DELIVERY_DONE = (update(inbox).where(inbox.c.key == bindparam("done_key"))
                 .values(done_at=bindparam("now"), claimed_until=None, payload=None))


class SqlInbox:
    def __init__(self, db: Database):
        self.db = db

    def keep(self, key: str, payload: str, claim_seconds: float) -> bool:
        return self._keep(key, payload, claim_seconds, None) is not False

    def keep_and_read(self, key: str, payload: str, claim_seconds: float, channel: Channel) -> Standing | None:
        return self._keep(key, payload, claim_seconds, channel) or None

    def _keep(self, key: str, payload: str, claim_seconds: float, channel: Channel | None) -> Standing | bool:
        """Kept (with, given `channel`, its turn's read of it), or False: it was kept before. The read comes first,
        on the keep's own connection (PostgreSQL: two statements in autocommit, no transaction's round trips), so a
        read that fails keeps nothing and Slack delivers the message again."""
        now = self.db.now()
        row = {"key": key, "payload": payload, "received_at": now, "attempts": 1,
               "claimed_until": now + timedelta(seconds=claim_seconds)}
        try:
            if channel is None:
                return self._insert(row)
            with self.db.keeping() as conn:  # Slack's ack waits for it
                standing = read_standing(conn, channel, now)
                conn.execute(_KEEP, row)
            return standing
        except IntegrityError:
            return False

    def _insert(self, row: dict) -> bool:
        """One INSERT Slack's ack waits for. A connection the server dropped (a restart) is tried once more on a
        fresh one (SQLAlchemy has replaced the pool's by then): had the first reached the table after all, the
        second finds the key, and the sweep replays the kept delivery once its claim expires."""
        try:
            with self.db.keeping() as conn:
                conn.execute(_KEEP, row)
        except DBAPIError as error:
            if isinstance(error, IntegrityError) or not error.connection_invalidated:
                raise
            with self.db.keeping() as conn:
                conn.execute(_KEEP, row)
        return True

    def done(self, key: str) -> None:
        with self.db.writing() as conn:
            conn.execute(DELIVERY_DONE, {"done_key": key, "now": self.db.now()})

    def due(self, limit: int = 100) -> list[str]:
        with self.db.reading() as conn:
            return list(conn.scalars(
                select(inbox.c.key).where(inbox.c.done_at.is_(None), _unclaimed(self.db.now()))
                .order_by(inbox.c.received_at).limit(limit)))

    def take(self, key: str, claim_seconds: float) -> Kept | None:
        now = self.db.now()
        with self.db.writing() as conn:
            row = conn.execute(
                update(inbox)
                .where(inbox.c.key == key, inbox.c.done_at.is_(None), _unclaimed(now))
                .values(claimed_until=now + timedelta(seconds=claim_seconds), attempts=inbox.c.attempts + 1)
                .returning(inbox.c.key, inbox.c.payload, inbox.c.attempts)
            ).first()
        return Kept(row.key, row.payload, row.attempts) if row else None

    def renew(self, keys: Collection[str], claim_seconds: float) -> None:
        if keys:
            with self.db.writing() as conn:
                conn.execute(update(inbox).where(inbox.c.key.in_(list(keys)), inbox.c.done_at.is_(None))
                             .values(claimed_until=self.db.now() + timedelta(seconds=claim_seconds)))

    def release(self, keys: Collection[str]) -> None:
        if keys:
            with self.db.writing() as conn:
                conn.execute(update(inbox).where(inbox.c.key.in_(list(keys)), inbox.c.done_at.is_(None))
                             .values(claimed_until=None))

    def prune(self, before: datetime) -> int:
        with self.db.writing() as conn:
            return conn.execute(delete(inbox).where(inbox.c.done_at < before)).rowcount


def _unclaimed(now: datetime):
    return or_(inbox.c.claimed_until.is_(None), inbox.c.claimed_until < now)


def _once(table) -> dict:
    """The table's INSERT that does nothing when its key is taken (it returns the key only when it inserted it),
    for each database, by dialect name."""
    return for_each_database(lambda dialect: dialect.insert(table).on_conflict_do_nothing().returning(table.c.key))


_CLAIM, _MARK = _once(claims), _once(markers)


class SqlClaims:
    def __init__(self, db: Database):
        self.db = db

    def claim(self, key: str) -> bool:
        return self._insert(_CLAIM, key)

    def mark(self, key: str) -> bool:
        return self._insert(_MARK, key)

    def prune(self, before: datetime) -> int:
        with self.db.writing() as conn:
            return conn.execute(delete(claims).where(claims.c.created_at < before)).rowcount

    def _insert(self, statements: dict, key: str) -> bool:
        with self.db.writing() as conn:
            return conn.execute(statements[conn.dialect.name], {"key": key, "created_at": self.db.now()}).first() is not None
