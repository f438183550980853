"""Workspaces that left: one row per team, from its uninstall until it returns or its conversations
are deleted. The first departure's time counts (tokens_revoked and app_uninstalled both arrive)."""
from __future__ import annotations

from datetime import datetime

from sqlalchemy import delete, insert, select
from sqlalchemy.exc import IntegrityError

from .work import Database
from .tables import departures


class SqlDepartures:
    def __init__(self, db: Database):
        self.db = db

    def depart(self, team_id: str) -> None:
        try:
            with self.db.writing() as conn:
                conn.execute(insert(departures).values(team_id=team_id, departed_at=self.db.now()))
        except IntegrityError:
            pass  # departed already: the first time stands

    def returned(self, team_id: str) -> None:
        self._forget(team_id)

    def departed_before(self, when: datetime) -> list[str]:
        with self.db.reading() as conn:
            return list(conn.execute(select(departures.c.team_id).where(departures.c.departed_at <= when)
                                     .order_by(departures.c.departed_at)).scalars())

    def settled(self, team_id: str) -> None:
        self._forget(team_id)

    def _forget(self, team_id: str) -> None:
        with self.db.writing() as conn:
            conn.execute(delete(departures).where(departures.c.team_id == team_id))
