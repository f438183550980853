"""Fixtures: fake Slack and Anthropic servers, the app over HTTP, and a database per test.

PostgreSQL tests use THREADFORK_TEST_PG; the database is created when the server is reachable
and it is missing, so a fresh clone needs nothing set up. Without a usable server they skip
with the reason, or fail when CI is set.
"""
import functools
import os
import shutil
import sqlite3
from pathlib import Path

import pytest
from sqlalchemy import create_engine, make_url, text
from sqlalchemy.exc import DBAPIError

from .fakes.anthropic_api import FakeAnthropic
from .fakes.slack_api import FakeSlack
from .harness import BOT_TOKEN, RunningBot

POSTGRES_URL = os.environ.get("THREADFORK_TEST_PG", "postgresql+psycopg://postgres@127.0.0.1:5432/threadfork_test")
if os.environ.get("PYTEST_XDIST_WORKER"):  # parallel runs: a database per worker, created when missing
    _url = make_url(POSTGRES_URL)
    POSTGRES_URL = _url.set(database=f"{_url.database}_{os.environ['PYTEST_XDIST_WORKER']}").render_as_string(
        hide_password=False)


def _database_exists(admin, name: str) -> bool:
    with admin.connect() as conn:
        return conn.execute(text("SELECT 1 FROM pg_database WHERE datname = :name"), {"name": name}).first() is not None


def postgres_reason() -> str | None:
    """None when the test database is usable, creating it first if missing; else why not."""
    url = make_url(POSTGRES_URL)
    server = f"{url.host}:{url.port or 5432}"
    admin = create_engine(url.set(database="postgres"), isolation_level="AUTOCOMMIT")
    try:
        try:
            exists = _database_exists(admin, url.database)
        except Exception as error:  # noqa: BLE001 - any failure means "not reachable"
            return f"PostgreSQL not reachable at {server} ({type(error).__name__})"
        if not exists:
            try:
                with admin.connect() as conn:
                    conn.execute(text(f"CREATE DATABASE {conn.dialect.identifier_preparer.quote(url.database)}"))
            except DBAPIError as error:
                if not _database_exists(admin, url.database):  # else another test run created it meanwhile
                    return f"cannot create the test database {url.database} at {server} ({type(error.orig).__name__})"
    finally:
        admin.dispose()
    try:
        engine = create_engine(url)
        with engine.connect() as conn:
            conn.execute(text("SELECT 1"))
        engine.dispose()
        return None
    except Exception as error:  # noqa: BLE001
        return f"PostgreSQL database {url.database} not usable at {server} ({type(error).__name__})"


_PG_REASON = postgres_reason()


def fresh_postgres() -> str:
    if _PG_REASON:
        if os.environ.get("CI"):
            pytest.fail(_PG_REASON)
        pytest.skip(_PG_REASON)
    engine = create_engine(POSTGRES_URL)
    with engine.begin() as conn:  # every table, whoever made it (another branch's migration too)
        conn.execute(text("DROP SCHEMA public CASCADE"))
        conn.execute(text("CREATE SCHEMA public"))
    engine.dispose()
    return POSTGRES_URL


def migrated_postgres() -> str:
    """The PostgreSQL test database at the newest migration with every table empty: emptied in one TRUNCATE
    when its schema is at the head already (a few ms), else made anew and migrated (`fresh_postgres`)."""
    if _PG_REASON:
        return fresh_postgres()  # skips or fails, saying why
    engine = create_engine(POSTGRES_URL)
    try:
        with engine.begin() as conn:
            tables = set(conn.scalars(text("SELECT tablename FROM pg_tables WHERE schemaname = 'public'")))
            at_head = "alembic_version" in tables and conn.scalar(
                text("SELECT version_num FROM alembic_version")) == head_revision()
            if at_head and tables - {"alembic_version"}:
                emptied = ", ".join(f'"{t}"' for t in sorted(tables - {"alembic_version"}))
                conn.execute(text(f"TRUNCATE {emptied} RESTART IDENTITY CASCADE"))
                return POSTGRES_URL
    finally:
        engine.dispose()
    from bot.store import open_store

    db, _ = open_store(fresh_postgres())
    db.create_schema()
    db.engine.dispose()
    return POSTGRES_URL


@functools.cache
def head_revision() -> str:
    """The newest migration's revision."""
    from alembic.script import ScriptDirectory

    from bot.store.schema import alembic_config

    return ScriptDirectory.from_config(alembic_config()).get_current_head()


@pytest.fixture(params=["sqlite", pytest.param("postgresql", marks=pytest.mark.postgres)])
def database_url(request, tmp_path):
    if request.param == "sqlite":
        return f"sqlite:///{tmp_path / 'threadfork.db'}"
    return fresh_postgres()


@pytest.fixture(params=["sqlite", pytest.param("postgresql", marks=pytest.mark.postgres)])
def migrated_url(request, tmp_path, migrated_sqlite):
    """Like `database_url`, but at the newest migration already (for bots: no test of migrating)."""
    return migrated_postgres() if request.param == "postgresql" else copy_of(migrated_sqlite, tmp_path)


@pytest.fixture
def sqlite_url(tmp_path):
    """A SQLite file nobody made yet (the bot migrates it from empty)."""
    return f"sqlite:///{tmp_path / 'threadfork.db'}"


@pytest.fixture(scope="session")
def migrated_sqlite(tmp_path_factory) -> Path:
    """A SQLite database at the newest migration, made once per test process: migrating an empty file costs
    ~0.15 s of CPU, a sizeable share of the suite's when every test does it; a copy costs a millisecond.
    Migrating from empty stays tested — here, in the store's migration tests, by every `sqlite_url` and every
    bot process started on a new file."""
    path = tmp_path_factory.mktemp("schema") / "threadfork.db"
    from bot.store import open_store

    db, _ = open_store(f"sqlite:///{path}")
    db.create_schema()
    db.engine.dispose()
    with sqlite3.connect(path) as conn:  # everything in the file itself, nothing left in its WAL
        conn.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    return path


@pytest.fixture
def migrated_sqlite_url(tmp_path, migrated_sqlite):
    """A fresh SQLite database already at the newest migration (a copy of `migrated_sqlite`)."""
    return copy_of(migrated_sqlite, tmp_path)


def copy_of(template: Path, folder: Path) -> str:
    target = folder / "threadfork.db"
    shutil.copyfile(template, target)
    return f"sqlite:///{target}"


@pytest.fixture
def slack():
    fake = FakeSlack(bot_token=BOT_TOKEN).start()  # files download only with the bot's own token
    yield fake
    fake.stop()
    assert not fake.violations, f"calls Slack would reject: {fake.violations}"


@pytest.fixture
def claude():
    fake = FakeAnthropic().start()
    yield fake
    fake.stop()
    assert not fake.rejections, f"requests the Messages API would refuse: {fake.rejections}"


@pytest.fixture
def bot(request, slack, claude, migrated_sqlite_url):
    """The app over HTTP; a test marked `settings(...)` passes extra settings."""
    marker = request.node.get_closest_marker("settings")
    running = RunningBot(slack, claude, migrated_sqlite_url, **(marker.kwargs if marker else {}))
    yield running
    running.stop()


@pytest.fixture
def pg_bot(slack, claude):
    running = RunningBot(slack, claude, migrated_postgres())
    yield running
    running.stop()


@pytest.fixture
def any_bot(slack, claude, migrated_url):
    """The app over HTTP on SQLite and on PostgreSQL."""
    running = RunningBot(slack, claude, migrated_url)
    yield running
    running.stop()
