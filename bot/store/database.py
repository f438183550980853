"""One database, shared by the store's parts: its engine, read and write transactions, its clock.

Writes queue for the writer before they take a pooled connection (SQLite has one writer; see
engine.py), reads run in deferred transactions that never wait behind writers.
"""
from __future__ import annotations

from contextlib import contextmanager
from datetime import datetime, timezone

from sqlalchemy import Engine, insert, update

from ..services.ports import Clock
from .engine import as_write, writer_queue
from .migrate import migrate
from .tables import health


def utcnow() -> datetime:
    return datetime.now(timezone.utc).replace(tzinfo=None)


class Database:
    def __init__(self, engine: Engine, clock: Clock = utcnow):
        self.engine = engine
        self._writer = writer_queue(engine)
        self.clock = clock

    @contextmanager
    def writing(self, urgent: bool = False):
        """A write transaction, queued for the writer before it takes a connection; `urgent` ones (what
        an acknowledgement waits for) go before the others waiting."""
        with (writer_queue(self.engine, urgent=True) if urgent else self._writer), self.engine.connect() as conn:
            as_write(conn)
            with conn.begin():
                yield conn

    @contextmanager
    def keeping(self):
        """One statement an acknowledgement waits for. On PostgreSQL it commits as it runs, on a pool of its own
        (engine.py: one round trip instead of BEGIN, the statement and COMMIT — a single statement is atomic by
        itself, and its commit as durable as any — never queued behind the replies' transactions); on SQLite it
        is an urgent write transaction (`writing`)."""
        door = getattr(self.engine, "threadfork_door", None)
        if door is None:
            with self.writing(urgent=True) as conn:
                yield conn
            return
        with door.connect() as conn:
            yield conn

    def reading(self):
        """A transaction that only reads (on SQLite a deferred one: it never waits for the writer)."""
        return self.engine.begin()

    def now(self) -> datetime:
        return self.clock()

    def create_schema(self) -> None:
        """Bring the database to the current schema (Alembic; safe with replicas starting together)."""
        migrate(self.engine)

    def check(self, process: str) -> None:
        """Write this process's health row: raises when the store cannot be written (unreachable, a
        full disk, a read-only database), not only when it cannot be reached."""
        with self.writing() as conn:
            now = self.now()
            if not conn.execute(update(health).where(health.c.process == process).values(checked_at=now)).rowcount:
                conn.execute(insert(health).values(process=process, checked_at=now))
