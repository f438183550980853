"""Real deletes (never flags): a channel's or a workspace's conversations, and the retention policy.

Each call is one write transaction that deletes what points at a row before the row: files' links,
then turns, then the message index, then sessions. Other processes cannot go on serving what was
deleted: session ids are never reused (AUTOINCREMENT on SQLite, sequences on PostgreSQL), a deleted
session reads as empty, and a session that lost turns has its version bumped, which starts every
process's cache of its history afresh (bot/store/queue.py, bot/domain/caching.py). The retention also
takes the topics of forks opened before its cut-off (people's words as old as the fork).
"""
from __future__ import annotations

from datetime import datetime
from typing import NamedTuple

from sqlalchemy import case, delete, exists, func, select, update

from ..domain.model import Channel, ForkStatus
from .work import Database
from .rows import in_channel, insert_parent, parent_key
from .tables import (agent_contexts, attachments, channel_settings, connector_calls, connectors, feedback, files,
                     memory_entries, messages, sessions, spend, turns)

CLOSED = (ForkStatus.MERGED.value, ForkStatus.ABANDONED.value)
BATCH = 500  # sessions per prune call: a large backlog is worked off over several sweeps


class SqlErasure:
    def __init__(self, db: Database):
        self.db = db

    def forget_channel(self, channel: Channel) -> int:
        with self.db.writing() as conn:
            _lock(conn, in_channel(channel))
            numbering = conn.scalar(select(sessions.c.next_fork_number)
                                    .where(sessions.c.parent_key == parent_key(channel)))
            deleted = delete_sessions(conn, _of_channel(conn, channel))
            conn.execute(delete(feedback).where(feedback.c.team_id == channel.team_id,
                                                feedback.c.channel_id == channel.id))
            conn.execute(delete(connector_calls).where(connector_calls.c.team_id == channel.team_id,
                                                       connector_calls.c.channel_id == channel.id))
            conn.execute(delete(spend).where(spend.c.team_id == channel.team_id, spend.c.channel_id == channel.id))
            # its memory goes too (its people's own entries of it included): people's words, nothing kept
            conn.execute(delete(memory_entries).where(memory_entries.c.team_id == channel.team_id,
                                                      memory_entries.c.channel_id == channel.id))
            # its connectors stay with its settings, their tokens go (an admin types them again)
            conn.execute(update(connectors).where(connectors.c.team_id == channel.team_id,
                                                  connectors.c.channel_id == channel.id).values(sealed_token=None))
            if numbering:  # a fresh parent that only carries the fork numbering on
                insert_parent(conn, channel, self.db.now(), next_fork_number=numbering)
            return deleted.sessions

    def forget_team(self, team_id: str) -> int:
        with self.db.writing() as conn:
            _lock(conn, sessions.c.team_id == team_id)
            deleted = delete_sessions(conn, select(sessions.c.id).where(sessions.c.team_id == team_id)
                                      .scalar_subquery())
            conn.execute(delete(feedback).where(feedback.c.team_id == team_id))
            conn.execute(delete(channel_settings).where(channel_settings.c.team_id == team_id))
            conn.execute(delete(agent_contexts).where(agent_contexts.c.team_id == team_id))
            conn.execute(delete(connectors).where(connectors.c.team_id == team_id))
            conn.execute(delete(connector_calls).where(connector_calls.c.team_id == team_id))
            conn.execute(delete(spend).where(spend.c.team_id == team_id))
            conn.execute(delete(memory_entries).where(memory_entries.c.team_id == team_id))  # workspace's too
            return deleted.sessions

    def prune(self, before: datetime) -> int:
        with self.db.writing() as conn:
            removed = delete_sessions(conn, _closed_forks(conn, before)).turns
            cuts = conn.execute(select(turns.c.session_id, func.max(turns.c.seq))
                                .where(turns.c.created_at < before)
                                .group_by(turns.c.session_id).order_by(turns.c.session_id)  # replicas lock alike
                                .limit(BATCH)).all()
            for session_id, cut in cuts:
                removed += _remove_prefix(conn, session_id, cut)
            _drop_old_topics(conn, before)
            # memory outlives the turns it came from, not the retention itself: an entry older than it goes
            conn.execute(delete(memory_entries).where(memory_entries.c.created_at < before))
            return removed

    def drop_unused_files(self, kept_before: datetime) -> list[str]:
        with self.db.writing() as conn:
            unused = ~exists().where(attachments.c.sha256 == files.c.sha256)
            gone = conn.execute(delete(files).where(files.c.created_at < kept_before, unused)
                                .returning(files.c.file_id)).all()
        return [row.file_id for row in gone if row.file_id]


class Deleted(NamedTuple):
    sessions: int
    turns: int


def delete_sessions(conn, ids) -> Deleted:
    """Delete the sessions `ids` (a list, or a subquery of sessions' ids) and everything that hangs off
    them."""
    if isinstance(ids, list) and not ids:
        return Deleted(0, 0)
    conn.execute(delete(attachments).where(attachments.c.turn_id.in_(
        select(turns.c.id).where(turns.c.session_id.in_(ids)))))
    # a summary left in a parent that stays no longer names its deleted fork
    conn.execute(update(turns).where(turns.c.source_fork_id.in_(ids)).values(source_fork_id=None))
    removed = conn.execute(delete(turns).where(turns.c.session_id.in_(ids))).rowcount
    conn.execute(delete(messages).where(messages.c.session_id.in_(ids)))
    return Deleted(conn.execute(delete(sessions).where(sessions.c.id.in_(ids))).rowcount, removed)


def _of_channel(conn, channel: Channel) -> list[int]:
    """The channel's sessions, and the private forks of its conversation (in their owners' DMs) with every
    fork of theirs: they read its turns, so they go with them."""
    ids = set(conn.scalars(select(sessions.c.id).where(in_channel(channel))))
    below = set(conn.scalars(select(sessions.c.id).where(sessions.c.team_id == channel.team_id,
                                                         sessions.c.private_of == channel.id)))
    while below - ids:
        ids |= below
        below = set(conn.scalars(select(sessions.c.id).where(sessions.c.parent_id.in_(list(below)))))
    return sorted(ids)


def _lock(conn, condition) -> None:
    """Lock the sessions first (PostgreSQL; SQLite has one writer anyway): a turn submitted meanwhile
    waits, then finds its session gone, instead of making the delete fail on its foreign key."""
    conn.execute(select(sessions.c.id).where(condition).with_for_update()).all()


def _closed_forks(conn, before: datetime) -> list[int]:
    """Forks merged or abandoned before then, and last active before then, except those a fork that
    stays still reads (a child inherits its parent fork's turns)."""
    doomed = set(conn.scalars(
        select(sessions.c.id)
        .where(sessions.c.kind == "fork", sessions.c.status.in_(CLOSED), sessions.c.last_activity_at < before,
               func.coalesce(sessions.c.closed_at, sessions.c.last_activity_at) < before)
        .order_by(sessions.c.id).limit(BATCH).with_for_update()))
    if not doomed:
        return []
    children = conn.execute(select(sessions.c.id, sessions.c.parent_id)
                            .where(sessions.c.parent_id.in_(list(doomed)))).all()
    while True:
        read_by_survivors = {parent for child, parent in children if child not in doomed} & doomed
        if not read_by_survivors:
            return sorted(doomed)
        doomed -= read_by_survivors


def _drop_old_topics(conn, before: datetime) -> None:
    """A fork's topic is people's words as old as the fork (its first turn, or an adopted thread's first
    message): a fork opened before the cut-off loses it, and is shown by its number alone from then on.
    Its version moves, as when turns go, so no process keeps a cached input that still names it."""
    conn.execute(update(sessions).where(sessions.c.kind == "fork", sessions.c.topic != "",
                                        sessions.c.created_at < before)
                 .values(topic="", version=sessions.c.version + 1))


def _remove_prefix(conn, session_id: int, cut: int) -> int:
    """Delete the session's turns up to seq `cut`, and record it; returns how many were deleted."""
    prefix = select(turns.c.id).where(turns.c.session_id == session_id, turns.c.seq <= cut)
    conn.execute(delete(attachments).where(attachments.c.turn_id.in_(prefix)))
    removed = conn.execute(delete(turns).where(turns.c.session_id == session_id, turns.c.seq <= cut)).rowcount
    # a summary under review speaks of the turns just deleted: it goes with them, and the expiry may draft
    # (or abandon) afresh (a merging fork keeps its approved text until the merge completes)
    open_fork = sessions.c.status == ForkStatus.OPEN.value
    conn.execute(update(sessions).where(sessions.c.id == session_id)
                 .values(pruned_before_seq=cut + 1, version=sessions.c.version + 1,
                         draft_text=case((open_fork, None), else_=sessions.c.draft_text),
                         draft_seq=case((open_fork, None), else_=sessions.c.draft_seq)))
    return removed
