"""The channel each person views while the bot's agent pane is open: one row per person, replaced by each
app_context_changed that happened after the one it holds (Slack does not promise to deliver events in order: a
late one changes nothing). One upsert, which an acknowledgement may wait for (`keeping`)."""
from __future__ import annotations

from sqlalchemy import or_, select

from .statements import for_each_database
from .work import Database
from .tables import agent_contexts as a


def _upsert(dialect):
    statement = dialect.insert(a)
    later = statement.excluded.seen_at
    return statement.on_conflict_do_update(
        index_elements=["team_id", "user_id"],
        set_={"channel_id": statement.excluded.channel_id, "changed_at": statement.excluded.changed_at,
              "seen_at": later},
        where=or_(a.c.seen_at.is_(None), a.c.seen_at <= later))


VIEWED = for_each_database(_upsert)


class SqlPane:
    def __init__(self, db: Database):
        self.db = db

    def viewed(self, team_id: str, user_id: str, channel_id: str | None, seen_at: str) -> None:
        with self.db.keeping() as conn:
            conn.execute(VIEWED[conn.dialect.name], {"team_id": team_id, "user_id": user_id,
                                                     "channel_id": channel_id, "changed_at": self.db.now(),
                                                     "seen_at": seen_at})

    def viewing(self, team_id: str, user_id: str) -> str | None:
        with self.db.reading() as conn:
            return conn.scalar(select(a.c.channel_id).where(a.c.team_id == team_id, a.c.user_id == user_id))
