"""What waits, for the metrics (bot/infrastructure/metrics.py): turns without their answer and deliveries
kept but not done, each with the age of the oldest. Read at each scrape; found through the same indexes
the sweep uses (pending turns by session, open deliveries)."""
from __future__ import annotations

from sqlalchemy import and_, func, select

from ..domain.model import TurnStatus
from .work import Database
from .tables import inbox, sessions, turns

_TURNS = select(func.count(), func.min(turns.c.created_at)).select_from(
    sessions.join(turns, and_(turns.c.session_id == sessions.c.id, turns.c.status == TurnStatus.PENDING.value)))
_DELIVERIES = select(func.count(), func.min(inbox.c.received_at)).where(inbox.c.done_at.is_(None))


def backlog(db: Database) -> dict[str, tuple[int, float | None]]:
    """{queue: (how many wait, the oldest one's age in seconds or None)} for `turns` and `deliveries`."""
    now = db.now()
    with db.reading() as conn:
        figures = {"turns": conn.execute(_TURNS).one(), "deliveries": conn.execute(_DELIVERIES).one()}
    return {queue: (count, (now - oldest).total_seconds() if oldest else None)
            for queue, (count, oldest) in figures.items()}
