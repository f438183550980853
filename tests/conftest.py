"""Fixtures: fake Slack and Anthropic servers, the app over HTTP, and a database per test.

PostgreSQL tests use THREADFORK_TEST_PG; the database is created when the server is reachable
and it is missing, so a fresh clone needs nothing set up. Without a usable server they skip
with the reason, or fail when CI is set.
"""
import os

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


@pytest.fixture(params=["sqlite", pytest.param("postgresql", marks=pytest.mark.postgres)])
def database_url(request, tmp_path):
    if request.param == "sqlite":
        return f"sqlite:///{tmp_path / 'threadfork.db'}"
    return fresh_postgres()


@pytest.fixture
def sqlite_url(tmp_path):
    return f"sqlite:///{tmp_path / 'threadfork.db'}"


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
def bot(request, slack, claude, sqlite_url):
    """The app over HTTP; a test marked `settings(...)` passes extra settings."""
    marker = request.node.get_closest_marker("settings")
    running = RunningBot(slack, claude, sqlite_url, **(marker.kwargs if marker else {}))
    yield running
    running.stop()


@pytest.fixture
def pg_bot(slack, claude):
    running = RunningBot(slack, claude, fresh_postgres())
    yield running
    running.stop()


@pytest.fixture
def any_bot(slack, claude, database_url):
    """The app over HTTP on SQLite and on PostgreSQL."""
    running = RunningBot(slack, claude, database_url)
    yield running
    running.stop()


def pytest_collection_modifyitems(items):
    """Tests marked `slow` first (in their order), then the rest: with the workers fed a couple of tests at a
    time (scripts/test: --maxschedchunk 2), the slow ones spread over all workers at once and the many
    short ones fill the gaps, instead of one long test starting last."""
    items.sort(key=lambda item: item.get_closest_marker("slow") is None)
