"""Once-only keys: the first INSERT of a key wins, every later one (any replica) hits the primary key."""
from __future__ import annotations

from sqlalchemy.exc import IntegrityError

from . import statements as sql
from .database import Database


class SqlClaims:
    def __init__(self, db: Database):
        self.db = db

    def claim(self, key: str) -> bool:
        try:
            with self.db.writing() as conn:
                conn.execute(sql.CLAIM, {"key": key, "created_at": self.db.now()})
            return True
        except IntegrityError:
            return False
