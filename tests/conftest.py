import os

import pytest
from sqlalchemy import create_engine, text

from .fakes.anthropic_api import FakeAnthropic
from .fakes.slack_api import FakeSlack
from .harness import RunningBot

POSTGRES_ADMIN_URL = os.environ.get("THREADFORK_TEST_PG_ADMIN", "postgresql+psycopg://postgres@127.0.0.1:5432/postgres")
POSTGRES_URL = os.environ.get("THREADFORK_TEST_PG", "postgresql+psycopg://postgres@127.0.0.1:5432/threadfork_test")


def postgres_reason() -> str | None:
    try:
        engine = create_engine(POSTGRES_URL)
        with engine.connect() as conn:
            conn.execute(text("SELECT 1"))
        engine.dispose()
        return None
    except Exception as error:  # noqa: BLE001 - any failure means "not reachable"
        return f"PostgreSQL not reachable at {POSTGRES_URL.split('@')[-1]} ({type(error).__name__})"


_PG_REASON = postgres_reason()


def fresh_postgres() -> str:
    from bot.store.tables import metadata

    if _PG_REASON:
        if os.environ.get("CI"):
            pytest.fail(_PG_REASON)
        pytest.skip(_PG_REASON)
    engine = create_engine(POSTGRES_URL)
    metadata.drop_all(engine)
    with engine.begin() as conn:
        conn.execute(text("DROP TABLE IF EXISTS alembic_version"))
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
    fake = FakeSlack().start()
    yield fake
    fake.stop()
    assert not fake.violations, f"calls Slack would reject: {fake.violations}"


@pytest.fixture
def claude():
    fake = FakeAnthropic().start()
    yield fake
    fake.stop()


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
