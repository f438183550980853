"""The database's schema: Alembic's migrations, run at start-up. Replicas starting together take turns: on
PostgreSQL behind an advisory lock, on SQLite behind the write lock of BEGIN IMMEDIATE. Alembic's own lines (one a
step) are left below WARNING by the log set-up; this module says in one line where the schema went."""
from __future__ import annotations

import logging
import threading
from pathlib import Path

from alembic import command
from alembic.config import Config
from alembic.runtime.migration import MigrationContext
from sqlalchemy import Engine

from .work import as_write

MIGRATIONS = Path(__file__).with_name("migrations")
log = logging.getLogger(__name__)

LOCK_KEY = 7_410_2026  # any constant shared by every replica
_IN_PROCESS = threading.Lock()  # Alembic's context is process-global: one migration at a time here


def alembic_config(connection=None) -> Config:
    config = Config()
    config.set_main_option("script_location", str(MIGRATIONS))
    config.attributes["connection"] = connection
    return config


def migrate(engine: Engine) -> None:
    with _IN_PROCESS, engine.connect() as connection:
        sqlite = connection.dialect.name == "sqlite"
        if sqlite:
            # SQLite alters a table by rebuilding it, which must not check the foreign keys of the
            # tables pointing at it half-way; they are checked as a whole before the commit instead.
            # (A no-op inside a transaction, so set before it begins, on the raw connection.)
            _foreign_keys(connection, "OFF")
        try:
            # one transaction, begun by the first statement (SQLAlchemy's "commit as you go") and committed
            # below: a failure rolls all of it back when the connection closes
            as_write(connection)
            if connection.dialect.name == "postgresql":
                connection.exec_driver_sql(f"SELECT pg_advisory_xact_lock({LOCK_KEY})")
            before = MigrationContext.configure(connection).get_current_revision()
            command.upgrade(alembic_config(connection), "head")
            after = MigrationContext.configure(connection).get_current_revision()
            if sqlite and connection.exec_driver_sql("PRAGMA foreign_key_check").first():
                raise RuntimeError("a migration left rows pointing at nothing; nothing was changed")
            connection.commit()
        finally:
            if sqlite:
                _foreign_keys(connection, "ON")
    log.info("database schema %s", f"at revision {after}" if before == after else f"migrated from {before or 'empty'} "
             f"to revision {after}")


def _foreign_keys(connection, state: str) -> None:
    connection.connection.dbapi_connection.execute(f"PRAGMA foreign_keys={state}")
