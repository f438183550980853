"""👍/👎 on answers and summaries: the first press of each person on each message counts."""
from __future__ import annotations

from sqlalchemy import insert
from sqlalchemy.exc import IntegrityError

from ..domain.model import Channel
from .work import Database
from .tables import feedback


class SqlFeedback:
    def __init__(self, db: Database):
        self.db = db

    def record(self, channel: Channel, message_ts: str, user_id: str, value: str) -> bool:
        try:
            with self.db.writing() as conn:
                conn.execute(insert(feedback).values(team_id=channel.team_id, channel_id=channel.id,
                                                     message_ts=message_ts, user_id=user_id, value=value,
                                                     created_at=self.db.now()))
            return True
        except IntegrityError:
            return False
