"""Once-only keys: the first INSERT of a key wins, every later one (any replica) hits the primary key.
Claims (deliveries, messages) matter for a day and are pruned; markers are forever."""
from __future__ import annotations

from datetime import datetime

from sqlalchemy import delete, insert
from sqlalchemy.exc import IntegrityError

from . import statements as sql
from .work import Database
from .tables import claims, markers

_MARK = insert(markers)


class SqlClaims:
    def __init__(self, db: Database):
        self.db = db

    def claim(self, key: str) -> bool:
        return self._insert(sql.CLAIM, key)

    def mark(self, key: str) -> bool:
        return self._insert(_MARK, key)

    def prune(self, before: datetime) -> int:
        with self.db.writing() as conn:
            return conn.execute(delete(claims).where(claims.c.created_at < before)).rowcount

    def _insert(self, statement, key: str) -> bool:
        try:
            with self.db.writing() as conn:
                conn.execute(statement, {"key": key, "created_at": self.db.now()})
            return True
        except IntegrityError:
            return False
