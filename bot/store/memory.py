"""Memory entries (bot/domain/memory.py): a channel's, a DM's and a workspace's (channel id ""), each entry one
row. Reading a session's memory is one query, made with its request (no extra round trip to the model); a
delete is real, and returns the row to the one caller that deleted it."""
from __future__ import annotations

from sqlalchemy import delete, insert, select, update

from ..domain.memory import WORKSPACE, MemoryEntry, estimate
from ..domain.model import Channel
from .work import Database
from .tables import memory_entries as m


def entry_of(row) -> MemoryEntry:
    return MemoryEntry(id=row.id, channel=Channel(row.team_id, row.channel_id), text=row.text,
                       author_id=row.author_id, author_name=row.author_name, created_at=row.created_at,
                       owner_id=row.owner_id, source_fork=row.source_fork, source_ts=row.source_ts, path=row.path,
                       pending=row.pending)


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
            rows = conn.execute(select(m).where(m.c.team_id == channel.team_id,
                                                m.c.channel_id.in_((channel.id, WORKSPACE))).order_by(m.c.id))
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
