"""The database's engine and the unit of work on it.

The unit of work: a use case says where its transaction begins and ends (`with work():`); the store's
repositories only load and save, on the connection of the unit of work open on their thread.

A repository called outside any unit of work runs in one of its own — a lone load or save is atomic by
itself, as Django's `atomic` leaves it — and a unit opened inside another joins it (the outer one commits).
On SQLite a writing unit queues for the one writer before it takes a connection (writer_queue, below);
a unit that only reads never waits behind writers. This module holds the store's only BEGIN.

The engine: SQLite gets WAL, a busy timeout and immediate write transactions (SQLAlchemy's documented pysqlite
recipe: `connect` and `begin` events); PostgreSQL a pool of kept connections and the acknowledgements' own.
"""
from __future__ import annotations

import contextlib
import os
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from datetime import datetime, timezone
from pathlib import Path

from sqlalchemy import Connection, Engine, create_engine, event, insert, update
from sqlalchemy.engine import make_url

from ..services.ports import Clock
from .tables import health

try:
    import fcntl
except ImportError:  # Windows: there, processes queue on SQLite's busy handler instead
    fcntl = None

SQLITE_BUSY_TIMEOUT_MS = 30_000
_WRITE = "threadfork_write"  # on a pooled connection: its next transaction writes (as_write)
_HOLDS_WRITER = "threadfork_writer"  # on a pooled connection: released when it is checked in


def make_engine(url: str) -> Engine:
    parsed = make_url(url)
    # hide_parameters: a statement's values (people's words, the installations' tokens) never reach an
    # exception's message, and so no log
    if parsed.get_backend_name() != "sqlite":
        return _postgres(url)
    database = parsed.database if parsed.database not in (None, "", ":memory:") else None  # a file
    if database:
        _private_files(Path(database))
    # readers each need a connection of their own; SQLite connections are cheap. The one checked in last goes
    # out first (LIFO): a connection keeps its page cache only while no other one writes, so a FIFO pool, which
    # hands out the coldest, had every transaction read its pages anew (bench, figure 4: 67 pread(2) a reply,
    # 20 with LIFO)
    engine = create_engine(parsed, connect_args={"check_same_thread": False, "timeout": 30}, pool_size=16,
                           max_overflow=48, pool_use_lifo=True, hide_parameters=True)
    _configure_sqlite(engine, database)
    return engine


# PostgreSQL's connections, per process: kept open, never one opened for a transaction and closed after it (the
# default pool's overflow did that under a burst: each a backend started by the server, and the statements it had
# prepared lost — bench, figure 3: the database's CPU per reply 6.0 → 3.8 ms). No overflow is needed: no transaction
# holds a connection while it waits for another (the PostgreSQL tests all pass on a pool of one).
# every transaction but the acknowledgements' (a reply's holds one a few round trips). More threads running
# transactions at once only wait for the interpreter lock while holding their connections: bench, figure 3's
# burst on PostgreSQL, ack p99 32 connections 1542 ms, 16 532 and 440 ms, 8 276 ms (A/B in one run, 4 rounds each)
POOL_CONNECTIONS = 8
DOOR_CONNECTIONS = 8  # the acknowledgements' own (Database.keeping): they never queue behind a burst's replies
# psycopg prepares a statement on a connection once it ran there this many times (its default, 5, left 16
# connections a pool to run each of a turn's statements 80 times over before the server stopped parsing and
# planning them anew; a statement run once is still never prepared)
PSYCOPG = {"prepare_threshold": 1}


def _postgres(url: str) -> Engine:
    """The engine, and beside it the door's: autocommit (an acknowledgement's keep is one INSERT, one round
    trip), without the pre-ping's round trip — SQLAlchemy invalidates the pool at the first disconnect, and the
    inbox tries a keep once more on a fresh connection (SqlInbox)."""
    engine = create_engine(url, pool_pre_ping=True, pool_size=POOL_CONNECTIONS, max_overflow=0,
                           hide_parameters=True, connect_args=PSYCOPG)
    engine.threadfork_door = create_engine(url, pool_size=DOOR_CONNECTIONS, max_overflow=0, hide_parameters=True,
                                           isolation_level="AUTOCOMMIT", connect_args=PSYCOPG)
    return engine


def _private_files(database: Path) -> None:
    """The database and the files beside it readable by the bot's user only: the folder 0700, the
    database and its writer lock 0600 (SQLite gives its -wal and -shm files the database's mode)."""
    folder = database.parent
    if not folder.exists():
        folder.mkdir(mode=0o700, parents=True)
    for path in (database, Path(f"{database}.writer")):
        os.close(os.open(path, os.O_RDWR | os.O_CREAT, 0o600))
        os.chmod(path, 0o600)


def writer_queue(engine: Engine, urgent: bool = False):
    """What a write transaction should hold before it takes a connection: SQLite's one-writer lock
    (re-entrant, also taken when the transaction begins), or nothing for PostgreSQL. Queuing here
    keeps waiting writers from holding pooled connections that readers need. `urgent`: ahead of the
    queue (an acknowledgement waits for it)."""
    writer = getattr(engine, "threadfork_writer", None)
    if writer is None:
        return contextlib.nullcontext()
    return writer.urgent() if urgent else writer


class _WriterLock:
    """SQLite's one writer, queued: threads on a lock, processes on flock(2) of a file beside the
    database. SQLite's own busy handler sleeps in growing steps (up to 100 ms) instead of queuing,
    which makes write latency explode under load. Re-entrant within a thread.

    Writes an acknowledgement waits for (`urgent`: the durable inbox keeping a delivery, one short
    INSERT) go before the queued ones: under a burst, hundreds of replies queue their turns' writes
    here, and Slack's 3-second ack deadline must not wait behind them (bench: burst acks)."""

    def __init__(self, database: str | None):
        self._state = threading.Lock()
        self._urgent_turn = threading.Condition(self._state)
        self._normal_turn = threading.Condition(self._state)
        self._owner: int | None = None
        self._depth = 0
        self._urgent_waiting = 0
        self._file = open(f"{database}.writer", "a+b") if database and fcntl else None  # noqa: SIM115

    def acquire(self, urgent: bool = False) -> None:
        me = threading.get_ident()
        with self._state:
            if self._owner == me:
                self._depth += 1
                return
            if urgent:
                self._urgent_waiting += 1
                while self._owner is not None:
                    self._urgent_turn.wait()
                self._urgent_waiting -= 1
            else:
                while self._owner is not None or self._urgent_waiting:
                    self._normal_turn.wait()
            self._owner, self._depth = me, 1
        if self._file:
            fcntl.flock(self._file.fileno(), fcntl.LOCK_EX)  # other processes; waits without the GIL

    def release(self) -> None:
        with self._state:
            self._depth -= 1
            if self._depth:
                return
        if self._file:
            fcntl.flock(self._file.fileno(), fcntl.LOCK_UN)
        with self._state:
            self._owner = None
            if self._urgent_waiting:
                self._urgent_turn.notify()
            else:
                self._normal_turn.notify()

    def urgent(self):
        """This thread's next write goes first (see the class docstring)."""
        return _Urgent(self)

    def __enter__(self) -> _WriterLock:
        self.acquire()
        return self

    def __exit__(self, *_exc) -> None:
        self.release()


class _Urgent:
    def __init__(self, lock: _WriterLock):
        self.lock = lock

    def __enter__(self) -> None:
        self.lock.acquire(urgent=True)

    def __exit__(self, *_exc) -> None:
        self.lock.release()


def as_write(connection: Connection) -> None:
    """The connection's next transaction writes (SQLite: queued, IMMEDIATE; PostgreSQL: nothing to do)."""
    if connection.dialect.name == "sqlite":
        connection.info[_WRITE] = True


def _configure_sqlite(engine: Engine, database: str | None) -> None:
    writer = _WriterLock(database)
    engine.threadfork_writer = writer

    @event.listens_for(engine, "connect")
    def _on_connect(dbapi_connection, _record):
        # let SQLAlchemy, not pysqlite, decide when transactions begin
        dbapi_connection.isolation_level = None
        cursor = dbapi_connection.cursor()
        cursor.execute(f"PRAGMA busy_timeout={SQLITE_BUSY_TIMEOUT_MS}")
        if cursor.execute("PRAGMA journal_mode").fetchone()[0].lower() != "wal":
            # switching to WAL needs an exclusive lock, and SQLite answers "database is locked" at
            # once, without waiting, when another process holds one (replicas starting together on a
            # new file): switch while holding the writers' queue
            with writer:
                cursor.execute("PRAGMA journal_mode=WAL")
        # in WAL mode NORMAL survives a process crash (only an OS crash can lose the last commits)
        # and saves an fsync on every commit
        cursor.execute("PRAGMA synchronous=NORMAL")
        cursor.execute("PRAGMA foreign_keys=ON")
        cursor.close()

    # SQLAlchemy's recipe for pysqlite's transactions (docs: "Serializable isolation / Savepoints /
    # Transactional DDL"): pysqlite begins none itself, this event does. A write (marked by `as_write`) queues
    # for the writer and begins IMMEDIATE — a deferred read-then-write transaction can fail with SQLITE_BUSY
    # without waiting, IMMEDIATE waits on busy_timeout instead — and anything else begins deferred, so reads
    # never queue behind writers
    @event.listens_for(engine, "begin")
    def _on_begin(conn: Connection):
        if not conn.info.pop(_WRITE, False):
            conn.exec_driver_sql("BEGIN")
            return
        writer.acquire()
        conn.info[_HOLDS_WRITER] = True
        try:
            conn.exec_driver_sql("BEGIN IMMEDIATE")
        except Exception:
            conn.info.pop(_HOLDS_WRITER)
            writer.release()
            raise

    @event.listens_for(engine.pool, "checkin")
    def _on_checkin(_dbapi_connection, record):
        # after COMMIT or ROLLBACK has really run
        if record is not None and record.info.pop(_HOLDS_WRITER, False):
            writer.release()



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

    def keeping(self):
        """One statement an acknowledgement waits for. On PostgreSQL it commits as it runs, on a pool of its own
        (`engine.threadfork_door`: one round trip instead of BEGIN, the statement and COMMIT — a single statement
        is atomic by itself, and its commit as durable as any — never queued behind the replies' transactions);
        on SQLite, and inside a unit of work, it is an urgent save (`writing`)."""
        return self._at_the_door(writes=True)

    def reading_at_the_door(self):
        """A read an acknowledgement waits for. On PostgreSQL on the acknowledgements' own pool (autocommit: each
        statement reads what was committed when it began), never queued behind a burst's replies for one of the
        main pool's connections (bench, figure 9: `/fork help` acked at p99 1.1-3 s while 200 replies streamed);
        on SQLite, and inside a unit of work, a read like any other (`reading`)."""
        return self._at_the_door(writes=False)

    @contextmanager
    def _at_the_door(self, writes: bool) -> Iterator[Connection]:
        door = getattr(self.engine, "threadfork_door", None)
        if door is None or self._joined(writes) is not None:
            with self.writing(urgent=True) if writes else self.reading() as conn:
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
        from .schema import migrate  # the schema's module needs this one's writer: imported when it runs

        migrate(self.engine)

    def check(self, process: str) -> None:
        """Write this process's health row: raises when the store cannot be written (unreachable, a
        full disk, a read-only database), not only when it cannot be reached."""
        with self.writing() as conn:
            now = self.now()
            if not conn.execute(update(health).where(health.c.process == process).values(checked_at=now)).rowcount:
                conn.execute(insert(health).values(process=process, checked_at=now))
