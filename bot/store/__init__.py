"""Persistence: SQLAlchemy 2 Core on SQLite (default) or PostgreSQL (DATABASE_URL): repositories, one module per
concern of the store ports (bot/services/ports/), over one Database whose unit of work (work.py) the use cases
open. Every state change that must happen once is a single conditional INSERT or UPDATE whose row count says who
won."""
from __future__ import annotations

from ..services.ports import Clock, Store
from .connectors import SqlConnectorTokens, SqlConnectorUse
from .work import Database, utcnow
from .departures import SqlDepartures
from .work import make_engine
from .erasure import SqlErasure
from .feedback import SqlFeedback
from .files import SqlFiles
from .inbox import SqlClaims, SqlInbox
from .channels import SqlMemories
from .merges import SqlMerges
from .pane import SqlPane
from .queue import SqlTurnQueue
from .reviews import SqlReviews
from .sessions import SqlSessions
from .channels import SqlChannelSettings, SqlSpending
from .stops import SqlStops
from .upkeep import SqlUpkeep
from .views import SqlViews

__all__ = ["Database", "make_engine", "open_store", "sql_store", "utcnow"]


def sql_store(db: Database) -> Store:
    """The store ports over one database."""
    sessions, turns = SqlSessions(db), SqlTurnQueue(db)  # each also adopts threads, raises budgets / edits turns
    return Store(work=db.work, claims=SqlClaims(db), inbox=SqlInbox(db), sessions=sessions, adoptions=sessions,
                 private=sessions.private, budgets=sessions, turns=turns, leases=turns, edits=turns,
                 merges=SqlMerges(db), reviews=SqlReviews(db), upkeep=SqlUpkeep(db), views=SqlViews(db),
                 files=SqlFiles(db), feedback=SqlFeedback(db), channel_settings=SqlChannelSettings(db),
                 connector_tokens=SqlConnectorTokens(db), connector_use=SqlConnectorUse(db), stops=SqlStops(db),
                 pane=SqlPane(db), spending=SqlSpending(db), erasure=SqlErasure(db), departures=SqlDepartures(db),
                 memories=SqlMemories(db), clock=db.clock, check=db.check)


def open_store(database_url: str, clock: Clock = utcnow) -> tuple[Database, Store]:
    """The database at `database_url` (schema not yet migrated: see Database.create_schema) and its store."""
    db = Database(make_engine(database_url), clock)
    return db, sql_store(db)
