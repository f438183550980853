"""The channel each person views while the bot's agent pane is open: one row per person, replaced by
each app_context_changed (the latest wins; an insert that loses a race becomes the update)."""
from __future__ import annotations

from sqlalchemy import insert, select, update
from sqlalchemy.exc import IntegrityError

from .work import Database
from .tables import agent_contexts

_ROW = (agent_contexts.c.team_id, agent_contexts.c.user_id)


class SqlPane:
    def __init__(self, db: Database):
        self.db = db

    def viewed(self, team_id: str, user_id: str, channel_id: str | None) -> None:
        values = {"channel_id": channel_id, "changed_at": self.db.now()}
        key = (agent_contexts.c.team_id == team_id, agent_contexts.c.user_id == user_id)
        try:
            with self.db.writing() as conn:
                if not conn.execute(update(agent_contexts).where(*key).values(**values)).rowcount:
                    conn.execute(insert(agent_contexts).values(team_id=team_id, user_id=user_id, **values))
        except IntegrityError:  # inserted meanwhile by another delivery: this one is the later word
            with self.db.writing() as conn:
                conn.execute(update(agent_contexts).where(*key).values(**values))

    def viewing(self, team_id: str, user_id: str) -> str | None:
        with self.db.reading() as conn:
            return conn.scalar(select(agent_contexts.c.channel_id).where(agent_contexts.c.team_id == team_id,
                                                                         agent_contexts.c.user_id == user_id))
