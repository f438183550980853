"""Each channel's estimated spend per UTC day (bot/domain/spend.py), added to in the very transaction that
records an answer, summary, draft or compaction (one upsert, no transaction of its own); and what a turn
reads of it: the month's sum, beside the channel's settings and its parent session's id in the one statement
a turn makes about its channel (in its delivery's keep, when the Slack adapter knows the channel then)."""
from __future__ import annotations

from dataclasses import replace
from datetime import datetime

from sqlalchemy import and_, bindparam, func, literal, select
from sqlalchemy.dialects import postgresql, sqlite

from ..domain.model import Channel, Usage
from ..domain.spend import Spent, SpendReport, day_of, month_of, spent
from ..services.ports import Standing
from ..infrastructure import metrics
from . import channel_settings as settings_rows
from .database import Database
from .quick import Quick
from .rows import parent_key, to_fork
from .sessions import FORK_BY_MESSAGE, PARENT
from .tables import channel_settings, spend

_FIGURES = ("cost_micros", "fork_micros", "uncached_micros", "unpriced")
_KEY = ("team_id", "channel_id", "day")


def _upsert(dialect):
    statement = dialect.insert(spend).values(**{name: bindparam(name) for name in (*_KEY, *_FIGURES)})
    return statement.on_conflict_do_update(
        index_elements=list(_KEY),
        set_={name: spend.c[name] + statement.excluded[name] for name in _FIGURES})


# on every recorded answer's path: built once, for each database
ADD = Quick({"sqlite": _upsert(sqlite), "postgresql": _upsert(postgresql)})
_channel = (spend.c.team_id == bindparam("team_id"), spend.c.channel_id == bindparam("channel_id"))
_MONTH = select(func.coalesce(func.sum(spend.c.cost_micros), 0)).where(
    *_channel, spend.c.day >= bindparam("first"), spend.c.day < bindparam("next"))
# a turn's one statement about its channel: the parent's id, the month's sum (a few indexed rows: summed
# whether or not a cap applies, SpendCaps decides) and the settings row if there is one (outer-joined to a
# row that always is)
_ALWAYS = select(literal(1).label("always")).subquery()
STANDING = Quick(select(PARENT.scalar_subquery().label("parent_session"),
                        _MONTH.scalar_subquery().label("month_spent"), channel_settings)
                 .select_from(_ALWAYS.outerjoin(channel_settings, and_(
                     channel_settings.c.team_id == bindparam("team_id"),
                     channel_settings.c.channel_id == bindparam("channel_id")))))


def add(conn, team_id: str, channel_id: str, now: datetime, usage: Usage, in_fork: bool) -> None:
    """Add a recorded call's cost to its channel's day (inside the caller's transaction); nothing for a call
    with no cost and no unpriced use (a fake model, a merge approved as drafted)."""
    metrics.model_usage(usage)
    figures = spent(usage, in_fork)
    if figures == Spent():
        return
    ADD.execute(conn, {"team_id": team_id, "channel_id": channel_id, "day": day_of(now),
                                          **{name: getattr(figures, name) for name in _FIGURES}})


def read_standing(conn, channel: Channel, now: datetime) -> Standing:
    """What a turn reads of its channel, inside the caller's transaction (a read, or the keep of its delivery)."""
    first, following = month_of(now)
    row = STANDING.execute(conn, {"team_id": channel.team_id, "channel_id": channel.id, "first": first,
                                  "next": following, "key": parent_key(channel)}).one()
    chosen = settings_rows.from_row(conn, channel, row if row.team_id is not None else None)
    return Standing(chosen, int(row.month_spent), row.parent_session)


class SqlSpending:
    def __init__(self, db: Database):
        self.db = db

    def chosen(self, channel: Channel, thread_ts: str | None = None) -> Standing:
        with self.db.reading() as conn:
            standing = read_standing(conn, channel, self.db.now())
            if thread_ts is None:
                return standing
            row = FORK_BY_MESSAGE.execute(conn, {"team_id": channel.team_id, "channel_id": channel.id,
                                                 "ts": thread_ts}).first()
        return replace(standing, fork=to_fork(row) if row else None)

    def report(self, channel: Channel) -> SpendReport:
        now = self.db.now()
        first, following = month_of(now)
        with self.db.reading() as conn:
            rows = conn.execute(select(spend.c.day, *(spend.c[name] for name in _FIGURES)).where(
                spend.c.team_id == channel.team_id, spend.c.channel_id == channel.id, spend.c.day >= first,
                spend.c.day < following)).all()
        days = {row.day: Spent(*(int(getattr(row, name)) for name in _FIGURES)) for row in rows}
        return SpendReport(today=days.get(day_of(now), Spent()), month=sum(days.values(), Spent()),
                           month_name=now.strftime("%B %Y"))

    def months(self, team_id: str) -> dict[str, Spent]:
        first, following = month_of(self.db.now())
        with self.db.reading() as conn:
            rows = conn.execute(select(spend.c.channel_id, *(func.sum(spend.c[name]) for name in _FIGURES))
                                .where(spend.c.team_id == team_id, spend.c.day >= first, spend.c.day < following)
                                .group_by(spend.c.channel_id)).all()
        return {row[0]: Spent(*(int(v or 0) for v in row[1:])) for row in rows}
