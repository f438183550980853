import pytest

from bot.store import open_store

from ..conftest import copy_of, migrated_postgres
from ..fakes.clock import FakeClock
from ..fakes.memory import memory_store


@pytest.fixture
def clock():
    return FakeClock()


@pytest.fixture(params=["memory", "sqlite", pytest.param("postgresql", marks=pytest.mark.postgres)])
def store(request, tmp_path, clock, migrated_sqlite):
    """The store ports, in memory, on SQLite and on PostgreSQL: one contract, three implementations."""
    if request.param == "memory":
        yield memory_store(clock)
        return
    url = copy_of(migrated_sqlite, tmp_path) if request.param == "sqlite" else migrated_postgres()
    db, store = open_store(url, clock)
    db.create_schema()
    yield store
    db.engine.dispose()
