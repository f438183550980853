"""The unit of work: a use case says where its transaction begins and ends (`with work():`); the store's
repositories only load and save, on the connection of the unit of work open on their thread.

A repository called outside any unit of work runs in one of its own — a lone load or save is atomic by
itself, as Django's `atomic` leaves it — and a unit opened inside another joins it (the outer one commits).
On SQLite a writing unit queues for the one writer before it takes a connection (engine.py: writer_queue);
a unit that only reads never waits behind writers. This module holds the store's only BEGIN.
"""
from __future__ import annotations

import threading
from collections.abc import Iterator
from contextlib import contextmanager
from datetime import datetime, timezone

from sqlalchemy import Connection, Engine, insert, update

from ..services.ports import Clock
from .engine import as_write, migrate, writer_queue
from .tables import health


def utcnow() -> datetime:
    return datetime.now(timezone.utc).replace(tzinfo=None)


class Database:
    def __init__(self, engine: Engine, clock: Clock = utcnow):
        self.engine = engine
        self._writer = writer_queue(engine)
        self.clock = clock
        self._open = threading.local()  # the unit of work open on each thread: .conn, .writes

    @contextmanager
    def work(self, urgent: bool = False) -> Iterator[None]:
        """A unit of work that writes: every load and save made in the block on this thread is one transaction,
        kept whole at the block's end or not at all (an exception leaves it). `urgent`: an acknowledgement waits
        for it (SQLite: ahead of the writers' queue)."""
        with self.writing(urgent):
            yield

    @contextmanager
    def writing(self, urgent: bool = False) -> Iterator[Connection]:
        """The connection to save on: the open unit of work's, or one of its own around the block."""
        joined = self._joined(writes=True)
        if joined is not None:
            yield joined
            return
        with (writer_queue(self.engine, urgent=True) if urgent else self._writer), self.engine.connect() as conn:
            as_write(conn)
            with conn.begin(), self._opened(conn, writes=True):
                yield conn

    @contextmanager
    def reading(self) -> Iterator[Connection]:
        """The connection to load on: the open unit of work's, or a read-only one of its own (on SQLite a
        deferred transaction: it never waits for the writer)."""
        joined = self._joined(writes=False)
        if joined is not None:
            yield joined
            return
        with self.engine.connect() as conn, conn.begin(), self._opened(conn, writes=False):
            yield conn

    @contextmanager
    def keeping(self) -> Iterator[Connection]:
        """One statement an acknowledgement waits for. On PostgreSQL it commits as it runs, on a pool of its own
        (`engine.threadfork_door`: one round trip instead of BEGIN, the statement and COMMIT — a single statement
        is atomic by itself, and its commit as durable as any — never queued behind the replies' transactions);
        on SQLite, and inside a unit of work, it is an urgent save (`writing`)."""
        door = getattr(self.engine, "threadfork_door", None)
        if door is None or self._joined(writes=True) is not None:
            with self.writing(urgent=True) as conn:
                yield conn
            return
        with door.connect() as conn:
            yield conn

    def _joined(self, writes: bool) -> Connection | None:
        conn = getattr(self._open, "conn", None)
        if conn is not None and writes and not self._open.writes:
            raise RuntimeError("a save inside a unit of work that only reads: open it with work()")
        return conn

    @contextmanager
    def _opened(self, conn: Connection, writes: bool) -> Iterator[None]:
        self._open.conn, self._open.writes = conn, writes
        try:
            yield
        finally:
            self._open.conn = None

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
