"""What each channel's admins chose in `/threadfork`: one row per channel of a workspace, NULL where
the environment's default applies. A save replaces the row (one upsert), and the channel's connectors
rows in the same transaction (connectors.py)."""
from __future__ import annotations

from dataclasses import fields

from sqlalchemy import bindparam, func, select
from sqlalchemy.dialects import postgresql, sqlite

from ..domain.model import Channel
from ..domain.settings import ChannelSettings
from . import connectors
from .engine import Database
from .rows import tools_of, tools_text
from .tables import channel_settings

_KEY = ("team_id", "channel_id")
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
                index_elements=list(_KEY), set_={k: v for k, v in values.items() if k not in _KEY}))
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
