"""A channel's own MCP connectors (rows of `connectors`, in order) and their sealed tokens.

The rows are written with the channel's settings (`write`, inside its save's transaction): a name
that stays keeps its row, and so its token; a name that goes takes its token with it. Tokens are
set by `SqlConnectorTokens.keep`, sealed already — plain text never reaches this module.
"""
from __future__ import annotations

from collections.abc import Mapping

from sqlalchemy import delete, select, update
from sqlalchemy.dialects import postgresql, sqlite

from ..domain.connectors import Connector
from ..domain.model import Channel
from .work import Database
from .rows import tools_of, tools_text
from .tables import connector_calls, connectors


def _of(channel: Channel):
    return (connectors.c.team_id == channel.team_id) & (connectors.c.channel_id == channel.id)


def read(conn, channel: Channel) -> tuple[Connector, ...]:
    rows = conn.execute(select(connectors.c.name, connectors.c.url, connectors.c.allowed_tools)
                        .where(_of(channel)).order_by(connectors.c.position))
    return tuple(Connector(r.name, r.url, tools_of(r.allowed_tools)) for r in rows)


def write(conn, channel: Channel, chosen: tuple[Connector, ...] | None) -> None:
    """Make the channel's rows `chosen` (None or (): none), keeping the token of each name that stays."""
    names = [c.name for c in chosen or ()]
    conn.execute(delete(connectors).where(_of(channel), connectors.c.name.not_in(names)))
    kept = set(conn.scalars(select(connectors.c.name).where(_of(channel))))
    for position, connector in enumerate(chosen or ()):
        values = {"position": position, "url": connector.url, "allowed_tools": tools_text(connector.allowed_tools)}
        if connector.name in kept:
            conn.execute(update(connectors).where(_of(channel), connectors.c.name == connector.name).values(**values))
        else:
            conn.execute(connectors.insert().values(team_id=channel.team_id, channel_id=channel.id,
                                                    name=connector.name, **values))


class SqlConnectorTokens:
    def __init__(self, db: Database):
        self.db = db

    def sealed(self, channel: Channel) -> dict[str, str]:
        with self.db.reading() as conn:
            rows = conn.execute(select(connectors.c.name, connectors.c.sealed_token)
                                .where(_of(channel), connectors.c.sealed_token.is_not(None)))
            return {r.name: r.sealed_token for r in rows}

    def keep(self, channel: Channel, sealed: Mapping[str, str]) -> None:
        with self.db.writing() as conn:
            conn.execute(update(connectors).where(_of(channel)).values(sealed_token=None))
            for name, token in sealed.items():
                conn.execute(update(connectors).where(_of(channel), connectors.c.name == name)
                             .values(sealed_token=token))


class SqlConnectorUse:
    def __init__(self, db: Database):
        self.db = db

    def record(self, channel: Channel, fork_number: int, calls: Mapping[str, int]) -> None:
        dialect = postgresql if self.db.engine.dialect.name == "postgresql" else sqlite
        with self.db.writing() as conn:
            for connector, count in calls.items():
                statement = dialect.insert(connector_calls).values(
                    team_id=channel.team_id, channel_id=channel.id, fork_number=fork_number, connector=connector,
                    calls=count)
                conn.execute(statement.on_conflict_do_update(
                    index_elements=["team_id", "channel_id", "fork_number", "connector"],
                    set_={"calls": connector_calls.c.calls + count}))

    def in_channel(self, channel: Channel) -> dict[int, dict[str, int]]:
        with self.db.reading() as conn:
            rows = conn.execute(select(connector_calls.c.fork_number, connector_calls.c.connector,
                                       connector_calls.c.calls)
                                .where(connector_calls.c.team_id == channel.team_id,
                                       connector_calls.c.channel_id == channel.id)
                                .order_by(connector_calls.c.fork_number, connector_calls.c.connector))
            counts: dict[int, dict[str, int]] = {}
            for row in rows:
                counts.setdefault(row.fork_number, {})[row.connector] = row.calls
            return counts
