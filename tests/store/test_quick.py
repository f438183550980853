"""Quick writes (bot/store/quick.py) store exactly what SQLAlchemy's own execute stores — defaults, datetimes,
booleans, NULLs, a RETURNING id — on SQLite (straight on the cursor) and PostgreSQL (SQLAlchemy's execute);
a conflict is SQLAlchemy's IntegrityError, without the values; a statement they cannot run as SQLAlchemy would is
refused when first compiled."""
from datetime import datetime

import pytest
from sqlalchemy import bindparam, func, insert, select, update
from sqlalchemy.exc import IntegrityError

from bot.store import open_store
from bot.store.quick import Quick
from bot.store.tables import inbox, sessions, turns

NOW = datetime(2026, 12, 5, 13, 56, 1, 123456)


@pytest.fixture
def db(migrated_url):
    db, _ = open_store(migrated_url)
    yield db
    db.engine.dispose()


def a_session(conn) -> int:
    return conn.execute(insert(sessions).values(kind="parent", channel_id="C1", team_id="T1", parent_key="T1:C1",
                                                created_at=NOW, last_activity_at=NOW).returning(sessions.c.id)).scalar_one()


def turn_values(session_id: int, seq: int) -> dict:
    return {"session_id": session_id, "seq": seq, "role": "user", "text": "words — with “quotes”", "author_id": "U1",
            "author_name": None, "status": "pending", "slack_ts": f"1.{seq}", "deleted": False, "has_files": True,
            "created_at": NOW}


def stored(conn, turn_id: int) -> dict:
    row = conn.execute(select(turns).where(turns.c.id == turn_id)).one()._asdict()
    row.pop("id")
    row.pop("seq")
    row.pop("slack_ts")
    return row


def test_an_insert_stores_what_sqlalchemy_stores_and_returns_the_new_id(db):
    quick = Quick(insert(turns).returning(turns.c.id))
    with db.writing() as conn:
        session = a_session(conn)
        by_sqlalchemy = conn.execute(insert(turns).returning(turns.c.id), turn_values(session, 1)).scalar_one()
        by_quick = quick.scalar(conn, turn_values(session, 2))
        assert by_quick == by_sqlalchemy + 1
        ours, theirs = stored(conn, by_quick), stored(conn, by_sqlalchemy)
    assert ours == theirs
    assert (ours["attempts"], ours["has_files"], ours["deleted"], ours["created_at"]) == (0, True, False, NOW)


def test_an_update_with_constants_and_nulls_changes_the_rows_sqlalchemy_would_and_counts_them(db):
    done = Quick(update(inbox).where(inbox.c.key == bindparam("done_key"))
                 .values(done_at=bindparam("now"), claimed_until=None, payload=None))
    with db.writing() as conn:
        for key in ("a", "b"):
            conn.execute(insert(inbox).values(key=key, payload="words", received_at=NOW, claimed_until=NOW,
                                              attempts=1))
        assert done.run(conn, {"done_key": "a", "now": NOW}) == 1
        assert done.run(conn, {"done_key": "missing", "now": NOW}) == 0
        rows = {r.key: r for r in conn.execute(select(inbox))}
    assert (rows["a"].payload, rows["a"].claimed_until, rows["a"].done_at) == (None, None, NOW)
    assert (rows["b"].payload, rows["b"].done_at) == ("words", None)


def test_a_conflict_is_sqlalchemys_integrity_error_and_does_not_show_the_values(db):
    keep = Quick(insert(inbox))
    values = {"key": "k", "payload": "a person's private words", "received_at": NOW, "attempts": 1}
    with db.writing() as conn:
        keep.run(conn, values)
    with pytest.raises(IntegrityError) as raised, db.writing() as conn:
        keep.run(conn, values)
    assert "private words" not in str(raised.value)
    with db.reading() as conn:
        assert conn.execute(select(func.count()).select_from(inbox)).scalar_one() == 1


@pytest.mark.parametrize("statement, why", [
    (update(turns).where(turns.c.id.in_(bindparam("ids", expanding=True))).values(attempts=1), "positional"),
    (insert(turns).returning(turns.c.text), "integer"),
])
def test_a_statement_it_cannot_run_as_sqlalchemy_would_is_refused(statement, why, tmp_path, migrated_sqlite):
    from ..conftest import copy_of

    db, _ = open_store(copy_of(migrated_sqlite, tmp_path))
    try:
        with pytest.raises(TypeError, match=why), db.writing() as conn:
            Quick(statement).run(conn, {"ids": [1]} if "ids" in str(statement) else turn_values(a_session(conn), 1))
    finally:
        db.engine.dispose()
