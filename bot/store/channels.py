"""What each channel keeps of its own: what its admins chose in `/threadfork`, what it spent, what it remembers.

- Settings: one row per channel of a workspace, NULL where the environment's default applies. A save replaces
  the row (one upsert), and the channel's connectors rows in the same transaction (connectors.py).
- Spend: each channel's estimated spend per UTC day (bot/domain/spend.py), added to in the very unit of work
  that records an answer, summary, draft or compaction (one upsert); and what a turn reads of it: the month's
  sum, beside the channel's settings and its parent session's id in the one statement a turn makes about its
  channel (in its delivery's keep, when the Slack adapter knows the channel then).
- Memory: memory entries (bot/domain/memory.py): a channel's, a DM's and a workspace's (channel id ""), each entry one
row. Reading a session's memory is one query, made with its request (no extra round trip to the model); a
delete is real, and returns the row to the one caller that deleted it.
"""
from __future__ import annotations

from dataclasses import fields, replace
from datetime import datetime

from sqlalchemy import and_, bindparam, case, delete, func, insert, literal, select, update
from sqlalchemy.dialects import postgresql, sqlite

from ..domain.memory import WORKSPACE, MemoryEntry, estimate
from ..domain.model import Channel, Usage
from ..domain.settings import ChannelSettings
from ..domain.spend import Reservation, Spent, SpendReport, day_of, month_of, spent
from ..services.ports import Standing
from ..infrastructure import metrics
from . import connectors
from .work import Database
from .rows import parent_key, to_fork, tools_of, tools_text
from .sessions import FORK_BY_MESSAGE, OPENING, PARENT
from .statements import for_each_database
from .tables import channel_settings, memory_entries as m, spend, turns

_FIGURES = ("cost_micros", "fork_micros", "uncached_micros", "unpriced")
_KEY = ("team_id", "channel_id", "day")


def _upsert(dialect):
    statement = dialect.insert(spend).values(**{name: bindparam(name) for name in (*_KEY, *_FIGURES)})
    return statement.on_conflict_do_update(
        index_elements=list(_KEY),
        set_={name: spend.c[name] + statement.excluded[name] for name in _FIGURES})


# on every recorded answer's path: built once, for each database
ADD = for_each_database(_upsert)
_channel = (spend.c.team_id == bindparam("team_id"), spend.c.channel_id == bindparam("channel_id"))
_MONTH = select(func.coalesce(func.sum(spend.c.cost_micros), 0)).where(
    *_channel, spend.c.day >= bindparam("first"), spend.c.day < bindparam("next"))
# a turn's one statement about its channel: the parent's id, the month's sum (a few indexed rows: summed
# whether or not a cap applies, SpendCaps decides) and the settings row if there is one (outer-joined to a
# row that always is)
_TODAY_RESERVED = select(spend.c.reserved_micros).where(*_channel, spend.c.day == bindparam("today"))
_ALWAYS = select(literal(1).label("always")).subquery()
STANDING = (select(PARENT.scalar_subquery().label("parent_session"),
                   _MONTH.scalar_subquery().label("month_spent"),
                   _TODAY_RESERVED.scalar_subquery().label("reserved"), channel_settings)
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
    conn.execute(ADD[conn.dialect.name], {"team_id": team_id, "channel_id": channel_id, "day": day_of(now),
                                          **{name: getattr(figures, name) for name in _FIGURES}})


def read_standing(conn, channel: Channel, now: datetime) -> Standing:
    """What a turn reads of its channel, inside the caller's transaction (a read, or the keep of its delivery)."""
    first, following = month_of(now)
    row = conn.execute(STANDING, {"team_id": channel.team_id, "channel_id": channel.id, "first": first,
                                  "next": following, "today": day_of(now), "key": parent_key(channel)}).one()
    chosen = from_row(conn, channel, row if row.team_id is not None else None)
    return Standing(chosen, int(row.month_spent), row.parent_session, reserved_micros=int(row.reserved or 0))


# A reservation: today's row made if missing, then one conditional UPDATE of it, admitted while the month's
# spend plus today's reservations is under the cap. The other days' sum cannot change meanwhile (answers are
# recorded on today's row), and the row's own figures are re-read under its lock (PostgreSQL re-checks the
# condition on the row a concurrent reservation committed; SQLite has one writer): atomic across replicas.
_other = spend.alias("other_days")
_OTHER_DAYS = select(func.coalesce(func.sum(_other.c.cost_micros), 0)).where(
    _other.c.team_id == bindparam("team"), _other.c.channel_id == bindparam("channel"),
    _other.c.day >= bindparam("first"), _other.c.day < bindparam("next"), _other.c.day != bindparam("on"))
_today = (spend.c.team_id == bindparam("team"), spend.c.channel_id == bindparam("channel"),
          spend.c.day == bindparam("on"))  # an UPDATE's parameters may not bear its columns' names
_RESERVE = (update(spend).where(*_today, spend.c.cost_micros + spend.c.reserved_micros
                                + _OTHER_DAYS.scalar_subquery() < bindparam("cap"))
            .values(reserved_micros=spend.c.reserved_micros + bindparam("micros")).returning(spend.c.day))
_RELEASE = update(spend).where(*_today).values(reserved_micros=case(
    (spend.c.reserved_micros > bindparam("micros"), spend.c.reserved_micros - bindparam("micros")), else_=0))


def _day_row(dialect):
    return dialect.insert(spend).values(team_id=bindparam("team_id"), channel_id=bindparam("channel_id"),
                                        day=bindparam("day")).on_conflict_do_nothing()


_DAY_ROW = for_each_database(_day_row)


# a reply's reservation as its row keeps it, then taken off the row: whoever's UPDATE changes the row gives it
# back (a second caller's finds nothing left; the kept figures never change but to nothing)
_KEPT = select(turns.c.reserved_micros, turns.c.reserved_day).where(turns.c.id == bindparam("reply"))
_UNKEEP = (update(turns).where(turns.c.id == bindparam("reply"), turns.c.reserved_micros > 0)
           .values(reserved_micros=0, reserved_day=None))


def release(conn, reservation: Reservation | None) -> None:
    """Give a reservation back (inside the caller's transaction: the one recording its answer settles it). One
    kept with its reply is given back once, though its holder and the sweep that took its reply over both try."""
    if reservation is None or not reservation.micros:
        return
    if reservation.reply_id is not None:
        release_kept(conn, reservation.channel, reservation.reply_id)
    else:
        _give_back(conn, reservation.channel, reservation.day, reservation.micros)


def release_kept(conn, channel: Channel, reply_id: int) -> None:
    """Give back what reply `reply_id` set aside on `channel`'s day, as its row keeps it, unless it was already."""
    kept = conn.execute(_KEPT, {"reply": reply_id}).first()
    if kept is not None and kept.reserved_micros and conn.execute(_UNKEEP, {"reply": reply_id}).rowcount == 1:
        _give_back(conn, channel, kept.reserved_day, kept.reserved_micros)


def _give_back(conn, channel: Channel, day: str, micros: int) -> None:
    conn.execute(_RELEASE, {"team": channel.team_id, "channel": channel.id, "on": day, "micros": micros})


class SqlSpending:
    def __init__(self, db: Database):
        self.db = db

    def chosen(self, channel: Channel, thread_ts: str | None = None) -> Standing:
        now = self.db.now()
        with self.db.reading() as conn:
            standing = read_standing(conn, channel, now)
            if thread_ts is None:
                return standing
            keys = {"team_id": channel.team_id, "channel_id": channel.id}
            row = conn.execute(FORK_BY_MESSAGE, {**keys, "ts": thread_ts}).first()
            opening = False
            if row is None:
                # each statement sees what was committed when it began (PostgreSQL): a root recorded between the
                # look above and this one ends its opening, and is found by looking again
                opening = conn.execute(OPENING, {**keys, "now": now}).first() is not None
                row = None if opening else conn.execute(FORK_BY_MESSAGE, {**keys, "ts": thread_ts}).first()
        return replace(standing, fork=to_fork(row) if row else None, opening=opening)

    def reserve(self, channel: Channel, micros: int, cap_micros: int,
                reply_id: int | None = None) -> Reservation | None:
        now = self.db.now()
        first, following = month_of(now)
        today = day_of(now)
        with self.db.writing() as conn:
            conn.execute(_DAY_ROW[conn.dialect.name], {"team_id": channel.team_id, "channel_id": channel.id,
                                                       "day": today})
            day = conn.execute(_RESERVE, {"team": channel.team_id, "channel": channel.id, "on": today, "first": first,
                                          "next": following, "cap": cap_micros, "micros": micros}).scalar()
            if day is not None and reply_id is not None:  # kept with its reply, in the same write
                conn.execute(update(turns).where(turns.c.id == reply_id).values(reserved_micros=micros,
                                                                                  reserved_day=day))
        return None if day is None else Reservation(channel, day, micros, reply_id)

    def release(self, reservation: Reservation) -> None:
        with self.db.writing() as conn:
            release(conn, reservation)

    def add(self, home: Channel, usage: Usage, in_fork: bool) -> None:
        with self.db.writing() as conn:
            add(conn, home.team_id, home.id, self.db.now(), usage, in_fork)

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


_SETTINGS_KEY = ("team_id", "channel_id")
# read at every turn (access, model input, policy): built once, as the statements on a turn's path are
CHOSEN = select(channel_settings).where(channel_settings.c.team_id == bindparam("team_id"),
                                        channel_settings.c.channel_id == bindparam("channel_id"))


class SqlChannelSettings:
    def __init__(self, db: Database):
        self.db = db

    def of(self, channel: Channel) -> ChannelSettings:
        with self.db.reading() as conn:
            return read(conn, channel)

    def of_at_the_door(self, channel: Channel) -> ChannelSettings:
        """`of`, for an acknowledgement that waits for it (Database.reading_at_the_door)."""
        with self.db.reading_at_the_door() as conn:
            return read(conn, channel)

    def save(self, channel: Channel, chosen: ChannelSettings, by: str) -> None:
        values = {"team_id": channel.team_id, "channel_id": channel.id, **columns(chosen), "updated_by": by,
                  "updated_at": self.db.now()}
        with self.db.writing() as conn:
            dialect = postgresql if self.db.engine.dialect.name == "postgresql" else sqlite
            statement = dialect.insert(channel_settings).values(**values)
            conn.execute(statement.on_conflict_do_update(
                index_elements=list(_SETTINGS_KEY), set_={k: v for k, v in values.items() if k not in _SETTINGS_KEY}))
            connectors.write(conn, channel, chosen.connectors)

    def shortest(self) -> tuple[float | None, float | None]:
        with self.db.reading() as conn:
            row = conn.execute(select(func.min(channel_settings.c.idle_reminder),
                                      func.min(channel_settings.c.expiry))).one()
        return row[0], row[1]


def read(conn, channel: Channel) -> ChannelSettings:
    """The channel's choices, inside the caller's read."""
    return from_row(conn, channel, conn.execute(CHOSEN, {"team_id": channel.team_id, "channel_id": channel.id}).first())


def from_row(conn, channel: Channel, row) -> ChannelSettings:
    """The channel's choices from its row as just read (None: it has none), its connectors read beside it."""
    chosen = connectors.read(conn, channel) if row is not None and row.connectors_chosen else None
    return to_settings(row, chosen) if row is not None else ChannelSettings()


# each setting is the column of its name (tools as text): a new setting needs its column, nothing here;
# connectors have a table of their own (bot/store/connectors.py), the row only says whether they were chosen
_SETTINGS = tuple(f.name for f in fields(ChannelSettings) if f.name != "connectors")


def columns(chosen: ChannelSettings) -> dict:
    return {**{name: getattr(chosen, name) for name in _SETTINGS}, "tools": tools_text(chosen.tools),
            "connectors_chosen": True if chosen.connectors is not None else None}


def to_settings(row, chosen_connectors=None) -> ChannelSettings:
    return ChannelSettings(**{**{name: getattr(row, name) for name in _SETTINGS}, "tools": tools_of(row.tools)},
                           connectors=chosen_connectors)


def entry_of(row) -> MemoryEntry:
    return MemoryEntry(id=row.id, channel=Channel(row.team_id, row.channel_id), text=row.text,
                       author_id=row.author_id, author_name=row.author_name, created_at=row.created_at,
                       owner_id=row.owner_id, source_fork=row.source_fork, source_ts=row.source_ts, path=row.path,
                       pending=row.pending)


# every turn's read, built once: a statement built per call (its values inlined, an IN list expanded) cost ~0.3 ms
# more of CPU than running this one (SQLite, 2 cores)
_SEEN_IN = select(m).where(m.c.team_id == bindparam("team_id"), m.c.channel_id.in_(
    [bindparam("channel_id"), literal(WORKSPACE)])).order_by(m.c.id)


class SqlMemories:
    def __init__(self, db: Database):
        self.db = db

    def add(self, channel: Channel, text: str, author_id: str, author_name: str | None, *, owner_id: str | None = None,
            source_fork: int | None = None, source_ts: str | None = None, path: str | None = None,
            pending: bool = False) -> MemoryEntry:
        values = dict(team_id=channel.team_id, channel_id=channel.id, owner_id=owner_id, text=text,
                      author_id=author_id, author_name=author_name, source_fork=source_fork, source_ts=source_ts,
                      path=path, pending=pending, created_at=self.db.now())
        with self.db.writing() as conn:
            row = conn.execute(insert(m).values(**values).returning(*m.c)).one()
        return entry_of(row)

    def entries(self, channel: Channel) -> list[MemoryEntry]:
        """The channel's entries (personal and pending ones included), oldest first."""
        with self.db.reading() as conn:
            rows = conn.execute(select(m).where(m.c.team_id == channel.team_id, m.c.channel_id == channel.id)
                                .order_by(m.c.id))
            return [entry_of(row) for row in rows]

    def seen_in(self, channel: Channel) -> list[MemoryEntry]:
        """The channel's entries and its workspace's, in one read, oldest first."""
        with self.db.reading() as conn:
            rows = conn.execute(_SEEN_IN, {"team_id": channel.team_id, "channel_id": channel.id})
            return [entry_of(row) for row in rows]

    def entry(self, entry_id: int) -> MemoryEntry | None:
        with self.db.reading() as conn:
            row = conn.execute(select(m).where(m.c.id == entry_id)).first()
            return entry_of(row) if row is not None else None

    def edit(self, entry_id: int, text: str | None = None, path: str | None = None) -> bool:
        values = {k: v for k, v in (("text", text), ("path", path)) if v is not None}
        if not values:
            return False
        with self.db.writing() as conn:
            return bool(conn.execute(update(m).where(m.c.id == entry_id).values(**values)).rowcount)

    def keep(self, entry_id: int) -> bool:
        """A pending entry kept (ask first): True for the one caller that kept it."""
        with self.db.writing() as conn:
            return bool(conn.execute(update(m).where(m.c.id == entry_id, m.c.pending.is_(True))
                                     .values(pending=False)).rowcount)

    def share(self, entry_id: int) -> bool:
        """A personal entry becomes the channel's (its private fork was merged)."""
        with self.db.writing() as conn:
            return bool(conn.execute(update(m).where(m.c.id == entry_id, m.c.owner_id.is_not(None))
                                     .values(owner_id=None)).rowcount)

    def delete(self, entry_id: int) -> MemoryEntry | None:
        """Delete it for real: the entry for the one caller that deleted it, None for every other."""
        with self.db.writing() as conn:
            row = conn.execute(delete(m).where(m.c.id == entry_id).returning(*m.c)).first()
            return entry_of(row) if row is not None else None

    def sizes(self, team_id: str) -> dict[str, int]:
        """Tokens each channel's shared memory holds (channel id WORKSPACE: the workspace's), for App Home."""
        with self.db.reading() as conn:
            rows = conn.execute(select(m.c.channel_id, m.c.text).where(m.c.team_id == team_id, m.c.owner_id.is_(None),
                                                                        m.c.pending.is_(False)))
            found: dict[str, int] = {}
            for row in rows:
                found[row.channel_id] = found.get(row.channel_id, 0) + estimate(row.text)
            return found
