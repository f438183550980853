"""Quick statements (bot/store/quick.py) store and read exactly what SQLAlchemy's own execute does — defaults,
datetimes, booleans, NULLs, a RETURNING id or row, a select's rows by name — on SQLite (straight on the cursor)
and PostgreSQL (SQLAlchemy's execute); a conflict is SQLAlchemy's IntegrityError, without the values; a statement
they cannot run as SQLAlchemy would is refused when first compiled; an IN list runs as a variant per length."""
from datetime import datetime

import pytest
from sqlalchemy import bindparam, func, insert, select, update
from sqlalchemy.exc import IntegrityError, MultipleResultsFound, NoResultFound

from bot.store import open_store
from bot.store.quick import Quick, QuickIn
from bot.store.spend import STANDING
from bot.store.tables import channel_settings, inbox, sessions, turns

from ..conftest import copy_of

NOW = datetime(2026, 12, 5, 13, 56, 1, 123456)


@pytest.fixture
def db(migrated_url):
    db, _ = open_store(migrated_url)
    yield db
    db.engine.dispose()


def a_session(conn) -> int:
    parent = insert(sessions).values(kind="parent", channel_id="C1", team_id="T1", parent_key="T1:C1",
                                     created_at=NOW, last_activity_at=NOW)
    return conn.execute(parent.returning(sessions.c.id)).scalar_one()


def turn_values(session_id: int, seq: int) -> dict:
    return {"session_id": session_id, "seq": seq, "role": "user", "text": "words — with “quotes”", "author_id": "U1",
            "author_name": None, "status": "pending", "slack_ts": f"1.{seq}", "deleted": False, "has_files": True,
            "created_at": NOW}


def stored(conn, turn_id: int) -> dict:
    row = conn.execute(select(turns).where(turns.c.id == turn_id)).one()._asdict()
    for differs in ("id", "seq", "slack_ts"):
        row.pop(differs)
    return row


def test_an_insert_stores_what_sqlalchemy_stores_and_returns_the_new_id(db):
    quick = Quick(insert(turns).returning(turns.c.id))
    with db.writing() as conn:
        session = a_session(conn)
        by_sqlalchemy = conn.execute(insert(turns).returning(turns.c.id), turn_values(session, 1)).scalar_one()
        by_quick = quick.execute(conn, turn_values(session, 2)).scalar_one()
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
        assert done.execute(conn, {"done_key": "a", "now": NOW}).rowcount == 1
        assert done.execute(conn, {"done_key": "missing", "now": NOW}).rowcount == 0
        rows = {r.key: r for r in conn.execute(select(inbox))}
    assert (rows["a"].payload, rows["a"].claimed_until, rows["a"].done_at) == (None, None, NOW)
    assert (rows["b"].payload, rows["b"].done_at) == ("words", None)


def test_rows_read_are_sqlalchemys_rows_by_name_and_by_position(db):
    renew = Quick(update(sessions).where(sessions.c.id == bindparam("session_id"))
                  .values(lease_owner=bindparam("owner"), lease_until=bindparam("until")).returning(*sessions.c))
    pending = Quick(select(turns).where(turns.c.session_id == bindparam("session_id")).order_by(turns.c.seq))
    with db.writing() as conn:
        session = a_session(conn)
        for seq in (1, 2):
            conn.execute(insert(turns), turn_values(session, seq))
        renewed = renew.execute(conn, {"session_id": session, "owner": "p1", "until": NOW}).one()
        assert tuple(renewed) == tuple(conn.execute(select(sessions).where(sessions.c.id == session)).one())
        assert (renewed.lease_owner, renewed.lease_until, renewed.created_at) == ("p1", NOW, NOW)
        ours = pending.execute(conn, {"session_id": session}).all()
        theirs = conn.execute(select(turns).where(turns.c.session_id == session).order_by(turns.c.seq)).all()
        assert [tuple(r) for r in ours] == [tuple(r) for r in theirs]
        assert [(r.seq, r.has_files, r.created_at) for r in ours] == [(1, True, NOW), (2, True, NOW)]
        assert pending.execute(conn, {"session_id": session}).first().seq == 1
        assert pending.execute(conn, {"session_id": -1}).first() is None
        with pytest.raises(MultipleResultsFound):
            pending.execute(conn, {"session_id": session}).one()
        with pytest.raises(NoResultFound):
            pending.execute(conn, {"session_id": -1}).one()


def test_a_select_of_subqueries_and_an_outer_join_reads_as_sqlalchemy_reads_it(db):
    params = {"team_id": "T1", "channel_id": "C1", "first": NOW.date(), "next": NOW.date(), "key": "T1:C1"}
    with db.writing() as conn:
        by_sqlalchemy = STANDING.for_dialect(conn.dialect.name)
        a_session(conn)
        assert tuple(STANDING.execute(conn, params).one()) == tuple(conn.execute(by_sqlalchemy, params).one())
        conn.execute(insert(channel_settings).values(team_id="T1", channel_id="C1", instructions="be brief",
                                                      updated_at=NOW, updated_by="U1"))
        row = STANDING.execute(conn, params).one()
        assert (row.instructions, row.updated_at, row.month_spent) == ("be brief", NOW, 0)
        assert tuple(row) == tuple(conn.execute(by_sqlalchemy, params).one())


def test_a_conflict_is_sqlalchemys_integrity_error_and_does_not_show_the_values(db):
    keep = Quick(insert(inbox))
    values = {"key": "k", "payload": "a person's private words", "received_at": NOW, "attempts": 1}
    with db.writing() as conn:
        keep.execute(conn, values)
    with pytest.raises(IntegrityError) as raised, db.writing() as conn:
        keep.execute(conn, values)
    assert "private words" not in str(raised.value)
    with db.reading() as conn:
        assert conn.execute(select(func.count()).select_from(inbox)).scalar_one() == 1


@pytest.mark.parametrize("statement, params, why", [
    (update(turns).where(turns.c.id.in_(bindparam("ids", expanding=True))).values(attempts=1), {"ids": [1]},
     "positional"),
    (select(sessions.c.id, turns.c.id).where(sessions.c.id == turns.c.session_id), {}, "names of their own"),
])
def test_a_statement_it_cannot_run_as_sqlalchemy_would_is_refused(statement, params, why, tmp_path, migrated_sqlite):
    db, _ = open_store(copy_of(migrated_sqlite, tmp_path))
    try:
        with pytest.raises(TypeError, match=why), db.writing() as conn:
            Quick(statement).execute(conn, params)
    finally:
        db.engine.dispose()


def test_an_in_list_runs_as_a_variant_per_length_and_beyond_the_most_as_sqlalchemys_expanding_list(db):
    settle = QuickIn(lambda ids: update(turns).where(turns.c.id.in_(ids)).values(status=bindparam("status")), "ids")
    with db.writing() as conn:
        session = a_session(conn)
        ids = [conn.execute(insert(turns).returning(turns.c.id), turn_values(session, seq)).scalar_one()
               for seq in range(1, QuickIn.MOST + 3)]
        assert settle.execute(conn, {"ids": ids[:1], "status": "answered"}).rowcount == 1
        assert settle.execute(conn, {"ids": ids[1:4], "status": "failed"}).rowcount == 3
        assert settle.execute(conn, {"ids": ids[4:], "status": "aborted"}).rowcount == len(ids) - 4  # > MOST
        assert settle.execute(conn, {"ids": [], "status": "complete"}).rowcount == 0
        statuses = [s for (s,) in conn.execute(select(turns.c.status).order_by(turns.c.seq))]
    assert statuses == ["answered"] + ["failed"] * 3 + ["aborted"] * (len(ids) - 4)
