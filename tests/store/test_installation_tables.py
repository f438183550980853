"""Migration 0006 creates exactly the tables slack-sdk's SQLAlchemy installation and OAuth state
stores define (their own metadata is the reference), on SQLite and on PostgreSQL, and those stores
work on the migrated database."""

from slack_sdk.oauth.installation_store import Installation
from slack_sdk.oauth.installation_store.sqlalchemy import SQLAlchemyInstallationStore
from slack_sdk.oauth.state_store.sqlalchemy import SQLAlchemyOAuthStateStore
from sqlalchemy import inspect

from bot.store import open_store

CLIENT_ID = "1000000001.2000000001"


def _reference(engine) -> dict:
    """slack-sdk's tables, as its stores define them."""
    tables = {}
    for store in (SQLAlchemyInstallationStore(CLIENT_ID, engine), SQLAlchemyOAuthStateStore(600, engine)):
        tables.update(store.metadata.tables)
    return tables


def test_the_migration_creates_slack_sdks_tables_exactly(database_url):
    db, _ = open_store(database_url)
    db.create_schema()
    found = inspect(db.engine)
    reference = _reference(db.engine)
    assert set(reference) == {"slack_installations", "slack_bots", "slack_oauth_states"}
    for name, table in reference.items():
        columns = found.get_columns(name)
        assert [c["name"] for c in columns] == [c.name for c in table.columns], name
        for made, wanted in zip(columns, table.columns):
            assert made["nullable"] == wanted.nullable, (name, wanted.name)
            assert _kind(made["type"]) == _kind(wanted.type), (name, wanted.name, made["type"], wanted.type)
            assert getattr(made["type"], "length", None) == getattr(wanted.type, "length", None), (name, wanted.name)
        assert found.get_pk_constraint(name)["constrained_columns"] == [c.name for c in table.primary_key]
        assert sorted((i["name"], tuple(i["column_names"])) for i in found.get_indexes(name)) == sorted(
            (i.name, tuple(c.name for c in i.columns)) for i in table.indexes)
    db.engine.dispose()


def _kind(column_type) -> str:
    """The type's family as the database reflects it (a Boolean is an integer on SQLite's side of things)."""
    name = type(column_type).__name__.upper()
    for family in ("VARCHAR", "STRING", "INTEGER", "DATETIME", "TIMESTAMP", "BOOLEAN"):
        if family in name:
            return {"STRING": "VARCHAR", "TIMESTAMP": "DATETIME"}.get(family, family)
    return name


def test_slack_sdks_stores_install_find_and_delete_on_the_migrated_database(database_url):
    db, _ = open_store(database_url)
    db.create_schema()
    installations = SQLAlchemyInstallationStore(CLIENT_ID, db.engine)
    installations.save(Installation(app_id="A0THREADFORK", team_id="T0TEAM002", team_name="Two", user_id="U1",
                                    bot_token="xoxb-two", bot_id="BBOT0002", bot_user_id="UBOT0002",
                                    bot_scopes=["chat:write"]))
    bot = installations.find_bot(enterprise_id=None, team_id="T0TEAM002")
    assert (bot.bot_token, bot.bot_user_id) == ("xoxb-two", "UBOT0002")
    installations.delete_all(enterprise_id=None, team_id="T0TEAM002")
    assert installations.find_bot(enterprise_id=None, team_id="T0TEAM002") is None
    states = SQLAlchemyOAuthStateStore(600, db.engine)
    state = states.issue()
    assert states.consume(state) and not states.consume(state)
    db.engine.dispose()
