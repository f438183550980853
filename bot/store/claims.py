"""Once-only keys: the first INSERT of a key wins, every later one (any replica) finds the primary key taken and
inserts nothing (ON CONFLICT DO NOTHING: no error, so a claim lost inside a use case's unit of work leaves its
transaction usable — on PostgreSQL an error would abort it). Claims (deliveries, messages) matter for a day and are
pruned; markers are forever."""
from __future__ import annotations

from datetime import datetime

from sqlalchemy import delete
from sqlalchemy.dialects import postgresql, sqlite

from .work import Database
from .tables import claims, markers


def _once(table) -> dict:
    """The table's INSERT that does nothing when its key is taken (it returns the key only when it inserted it),
    for each database, by dialect name."""
    return {d.dialect.name: d.insert(table).on_conflict_do_nothing().returning(table.c.key) for d in (sqlite, postgresql)}


_CLAIM, _MARK = _once(claims), _once(markers)


class SqlClaims:
    def __init__(self, db: Database):
        self.db = db

    def claim(self, key: str) -> bool:
        return self._insert(_CLAIM, key)

    def mark(self, key: str) -> bool:
        return self._insert(_MARK, key)

    def prune(self, before: datetime) -> int:
        with self.db.writing() as conn:
            return conn.execute(delete(claims).where(claims.c.created_at < before)).rowcount

    def _insert(self, statements: dict, key: str) -> bool:
        with self.db.writing() as conn:
            return conn.execute(statements[conn.dialect.name], {"key": key, "created_at": self.db.now()}).first() is not None
