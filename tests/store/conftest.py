import pytest

from bot.store import open_store

from ..conftest import fresh_postgres
from ..fakes.clock import FakeClock
from ..fakes.memory import memory_store


@pytest.fixture
def clock():
    return FakeClock()


@pytest.fixture(params=["memory", "sqlite", pytest.param("postgresql", marks=pytest.mark.postgres)])
def store(request, tmp_path, clock):
    """The store ports, in memory, on SQLite and on PostgreSQL: one contract, three implementations."""
    if request.param == "memory":
        yield memory_store(clock)
        return
    url = f"sqlite:///{tmp_path / 'threadfork.db'}" if request.param == "sqlite" else fresh_postgres()
    db, store = open_store(url, clock)
    db.create_schema()
    yield store
    db.engine.dispose()
