"""What only the SQL store has: Alembic migrations run once by replicas starting together, and
SQLite writers in different processes queueing for the one writer."""
import threading
import time

import pytest

from bot.domain.model import Mode
from bot.store import make_engine, open_store

from ..conftest import head_revision
from ..harness import wait_until


def test_migrations_run_once_however_many_replicas_start_together(database_url):
    import subprocess
    import sys

    from sqlalchemy import inspect, text

    script = "import sys; from bot.store import open_store; open_store(sys.argv[1])[0].create_schema()"
    replicas = [subprocess.Popen([sys.executable, "-c", script, database_url], stderr=subprocess.PIPE, text=True)
                for _ in range(3)]
    for replica in replicas:
        assert replica.wait(timeout=60) == 0, replica.stderr.read()
    db, _ = open_store(database_url)
    db.create_schema()  # and again: idempotent
    with db.engine.connect() as conn:
        assert conn.execute(text("SELECT version_num FROM alembic_version")).scalar() == head_revision()
    assert {"sessions", "turns", "messages", "claims"} <= set(inspect(db.engine).get_table_names())
    db.engine.dispose()


def test_a_store_written_before_workspace_keys_upgrades_with_its_forks_messages_and_feedback(database_url):
    from alembic import command
    from sqlalchemy import text

    from bot.domain.model import Channel
    from bot.store.schema import alembic_config

    db, store = open_store(database_url)
    with db.engine.begin() as conn:
        command.upgrade(alembic_config(conn), "0003")
        now = "2026-11-30 12:00:00"
        conn.execute(text("INSERT INTO sessions (id, kind, channel_id, team_id, parent_key, topic, status, "
                          "inherited_turns, inherited_tokens, budget_extra, next_seq, version, next_fork_number, "
                          "merge_attempts, created_at, last_activity_at) VALUES "
                          f"(1, 'parent', 'C1', 'T1', 'C1', '', 'open', 0, 0, 0, 0, 0, 1, 0, '{now}', '{now}'), "
                          f"(2, 'fork', 'C1', 'T1', NULL, 'old', 'open', 0, 0, 0, 0, 0, 0, 0, '{now}', '{now}')"))
        conn.execute(text("UPDATE sessions SET number = 1, parent_id = 1, mode = 'fresh', root_ts = '5.1' "
                          "WHERE id = 2"))
        conn.execute(text("INSERT INTO messages (channel_id, ts, session_id) VALUES ('C1', '5.1', 2)"))
        conn.execute(text(f"INSERT INTO feedback VALUES ('C1', '5.1', 'U1', 'good', '{now}')"))
    db.create_schema()
    if db.engine.dialect.name == "postgresql":  # rows made with explicit ids: move the sequence past them
        with db.engine.begin() as conn:
            conn.execute(text("SELECT setval('sessions_id_seq', 10)"))
    here = Channel("T1", "C1")
    assert store.sessions.parent_id(here) == 1  # the channel's parent, not a new one
    assert store.sessions.fork_by_message(here, "5.1").id == 2
    assert store.sessions.create_fork(here, "U1", Mode.FRESH, "").number == 2
    assert store.feedback.record(here, "5.1", "U1", "bad") is False  # the old press still counts
    assert store.sessions.parent_id(Channel("T2", "C1")) not in (1, 2)
    db.engine.dispose()


def _hold_the_writer(database: str, held, release) -> None:
    from bot.store.work import writer_queue

    with writer_queue(make_engine(f"sqlite:///{database}")):
        held.set()
        release.wait(10)


def test_sqlite_writers_in_different_processes_queue_for_the_one_writer(tmp_path):
    """Processes on one SQLite file wait in turn (flock) instead of polling in SQLite's busy handler."""
    import multiprocessing

    from bot.store.work import writer_queue

    database = str(tmp_path / "shared.db")
    context = multiprocessing.get_context("spawn")
    held, release = context.Event(), context.Event()
    holder = context.Process(target=_hold_the_writer, args=(database, held, release))
    holder.start()
    try:
        assert held.wait(30)
        started = time.monotonic()
        threading.Timer(0.4, release.set).start()
        with writer_queue(make_engine(f"sqlite:///{database}")):
            waited = time.monotonic() - started
        assert waited >= 0.35  # it waited for the other process's release
    finally:
        release.set()
        holder.join(10)


def test_a_write_an_acknowledgement_waits_for_goes_before_the_writes_already_queued(tmp_path):
    """Under a burst, replies queue their turns' writes; the inbox's keep (Slack's ack waits on it) is
    served first when the writer frees up, then the others in turn — and each write still holds it alone."""
    from bot.store.work import writer_queue

    engine = make_engine(f"sqlite:///{tmp_path / 'queue.db'}")
    order, holding = [], threading.Lock()

    def write(name: str, urgent: bool) -> None:
        with writer_queue(engine, urgent=urgent):
            assert holding.acquire(blocking=False), "two writers at once"
            order.append(name)
            time.sleep(0.01)
            holding.release()

    with writer_queue(engine):  # the writer is busy
        queued = [threading.Thread(target=write, args=(f"reply {n}", False)) for n in range(3)]
        for thread in queued:
            thread.start()
        time.sleep(0.2)  # the replies' writes are waiting
        ack = threading.Thread(target=write, args=("ack", True))
        ack.start()
        wait_until(lambda: engine.threadfork_writer._urgent_waiting == 1, message="the ack's write to queue")
    for thread in [*queued, ack]:
        thread.join(10)
    assert order[0] == "ack" and sorted(order[1:]) == ["reply 0", "reply 1", "reply 2"]
    engine.dispose()


def test_the_migrations_build_exactly_the_schema_the_tables_declare(database_url):
    from alembic.autogenerate import compare_metadata
    from alembic.migration import MigrationContext

    from bot.store.tables import metadata

    db, _ = open_store(database_url)
    db.create_schema()
    with db.engine.connect() as conn:
        drift = compare_metadata(MigrationContext.configure(conn), metadata)
    db.engine.dispose()
    assert drift == []


def test_a_health_check_writes_and_fails_on_a_database_that_cannot_be_written(tmp_path):
    from sqlalchemy import create_engine, text

    from bot.store import Database

    path = tmp_path / "threadfork.db"
    db, _ = open_store(f"sqlite:///{path}")
    db.create_schema()
    db.check("process-a")
    db.check("process-a")
    with db.engine.connect() as conn:
        assert conn.execute(text("SELECT process FROM health")).scalars().all() == ["process-a"]
    read_only = Database(create_engine(f"sqlite:///file:{path}?mode=ro&uri=true"))
    with pytest.raises(Exception, match="readonly"):
        read_only.check("process-b")


def test_the_sqlite_database_and_the_files_beside_it_are_readable_by_the_bots_user_only(tmp_path):
    import stat

    folder = tmp_path / "data"
    db, store = open_store(f"sqlite:///{folder / 'threadfork.db'}")
    db.create_schema()
    store.claims.claim("msg:C1:1.1")  # a write: the WAL and its index exist now
    modes = {p.name: stat.S_IMODE(p.stat().st_mode) for p in folder.iterdir()}
    db.engine.dispose()
    assert stat.S_IMODE(folder.stat().st_mode) == 0o700
    assert {"threadfork.db", "threadfork.db-wal", "threadfork.db-shm", "threadfork.db.writer"} <= set(modes)
    assert set(modes.values()) == {0o600}, modes


def test_a_store_written_before_retention_upgrades_and_never_gives_a_deleted_sessions_id_again(sqlite_url):
    from alembic import command
    from sqlalchemy import text

    from bot.domain.model import Channel
    from bot.store.schema import alembic_config

    db, store = open_store(sqlite_url)
    with db.engine.begin() as conn:
        command.upgrade(alembic_config(conn), "0005")
        now = "2026-12-01 12:00:00"
        conn.execute(text("INSERT INTO sessions (id, kind, channel_id, team_id, parent_key, topic, status, "
                          "inherited_turns, inherited_tokens, budget_extra, next_seq, version, next_fork_number, "
                          "merge_attempts, created_at, last_activity_at) VALUES "
                          f"(1, 'parent', 'C1', 'T1', 'T1:C1', '', 'open', 0, 0, 0, 1, 0, 0, 0, '{now}', '{now}'), "
                          f"(2, 'parent', 'C2', 'T1', 'T1:C2', '', 'open', 0, 0, 0, 0, 0, 0, 0, '{now}', '{now}')"))
        conn.execute(text("INSERT INTO turns (session_id, seq, role, text, status, input_tokens, output_tokens, "
                          "cache_read_tokens, cache_write_tokens, deleted, attempts, has_files, searches, fetches, "
                          f"created_at) VALUES (1, 1, 'user', 'kept', 'answered', 0, 0, 0, 0, 0, 0, 0, 0, 0, '{now}')"))
    db.create_schema()
    assert [t.text for t in store.turns.turns(1)] == ["kept"]
    assert store.sessions.session(1).pruned_before_seq == 0
    store.erasure.forget_channel(Channel("T1", "C2"))  # the highest id goes
    assert store.sessions.parent_id(Channel("T1", "C3")) == 3  # SQLite without AUTOINCREMENT would give 2 again
    db.engine.dispose()


def test_sqlite_writes_hold_the_write_lock_from_their_begin_and_reads_never_wait_for_it(tmp_path):
    import sqlite3

    from bot.store.work import Database

    database = tmp_path / "locks.db"
    db = Database(make_engine(f"sqlite:///{database}"))
    db.create_schema()
    other = sqlite3.connect(database, timeout=0, isolation_level=None)
    with db.writing():  # no statement yet: the lock is SQLite's from BEGIN IMMEDIATE on
        with pytest.raises(sqlite3.OperationalError, match="locked"):
            other.execute("BEGIN IMMEDIATE")
    other.execute("BEGIN IMMEDIATE")  # another process writing now
    with db.reading() as conn:  # deferred: reads the last commit without waiting
        assert conn.exec_driver_sql("SELECT COUNT(*) FROM sessions").scalar() == 0
    other.execute("ROLLBACK")
    other.close()
    db.engine.dispose()


def test_a_sessions_pending_turns_are_read_through_their_index_not_its_whole_history(migrated_sqlite_url):
    """SQLite chose the (session_id, seq) index for its order, reading every turn of the session, until the
    pending index held the seq too (migration 0013)."""
    from bot.store import statements as sql

    db, _ = open_store(migrated_sqlite_url)
    try:
        with db.engine.connect() as conn:
            pending = sql.PENDING.compile(dialect=conn.dialect)
            plan = conn.exec_driver_sql(f"EXPLAIN QUERY PLAN {pending.string}", (1, "pending")).all()
        assert [row[-1] for row in plan] == ["SEARCH turns USING INDEX ix_turns_pending (session_id=? AND status=?)"]
    finally:
        db.engine.dispose()


@pytest.mark.postgres
def test_a_delivery_kept_after_postgresql_dropped_every_connection_is_kept_on_a_fresh_one():
    from sqlalchemy import create_engine, text

    from ..conftest import migrated_postgres

    db, store = open_store(migrated_postgres())
    assert store.inbox.keep("event:EvBefore", "{}", 30)  # the door's pool now holds an open connection
    admin = create_engine(db.engine.url, isolation_level="AUTOCOMMIT")
    with admin.connect() as conn:  # what a server restart does to the bot's connections
        conn.execute(text("SELECT pg_terminate_backend(pid) FROM pg_stat_activity "
                          "WHERE datname = current_database() AND pid <> pg_backend_pid()"))
    admin.dispose()
    assert store.inbox.keep("event:EvAfter", "{}", 30)  # the acknowledgement does not fail
    assert store.inbox.keep("event:EvAfter", "{}", 30) is False  # kept once
    db.engine.dispose()
