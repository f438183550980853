"""Rows to domain objects, and the few writes several parts of the store share (appending a turn,
indexing a message, settling turns, leases), each run inside the caller's transaction."""
from __future__ import annotations

from collections.abc import Sequence
from dataclasses import replace
from datetime import datetime

from sqlalchemy import and_, exists, insert, or_, select, update

from ..domain import connectors as connector_list
from ..domain.model import (
    Attachment,
    Channel,
    ContextSize,
    Draft,
    FileKind,
    Fork,
    ForkStatus,
    Mode,
    Role,
    Session,
    Turn,
    TurnStatus,
    Usage,
)
from ..domain.queue import lease_until
from ..domain.settings import ChannelSettings
from . import statements as sql
from .tables import channel_settings, sessions, turns


def append(conn, now: datetime, session_id: int, role: Role, text: str, status: TurnStatus, *,
           author_id=None, author_name=None, slack_ts=None, usage: Usage = Usage(), source_fork_id=None,
           covers_seq=None, attachments: Sequence[Attachment] = (), seq: int | None = None) -> Turn:
    """A turn after the session's last; `seq`: the one the caller already reserved on its row (SEQ_AND_LEASE)."""
    if seq is None:
        seq = conn.execute(sql.NEXT_SEQ, {"session_id": session_id, "now": now}).scalar_one()
    turn_id = conn.execute(sql.INSERT_TURN, {
        "session_id": session_id, "seq": seq, "role": role.value, "text": text, "author_id": author_id,
        "author_name": author_name, "status": status.value, "slack_ts": slack_ts, "source_fork_id": source_fork_id,
        **usage_values(usage), "covers_seq": covers_seq, "deleted": False, "has_files": bool(attachments),
        "created_at": now}).scalar_one()
    if attachments:
        conn.execute(sql.INSERT_ATTACHMENT, [
            {"turn_id": turn_id, "position": n, "sha256": a.sha256, "name": a.name, "slack_file_id": a.slack_file_id,
             "deleted": False} for n, a in enumerate(attachments)])
    return Turn(session_id, seq, role, text, author_id, author_name, status, usage, slack_ts, turn_id, covers_seq,
                tuple(attachments), created_at=now)


def usage_values(usage: Usage) -> dict:
    """A Usage as the turns table's columns."""
    return {"input_tokens": usage.input_tokens, "output_tokens": usage.output_tokens,
            "cache_read_tokens": usage.cache_read_tokens, "cache_write_tokens": usage.cache_write_tokens,
            "searches": usage.searches, "fetches": usage.fetches, "cache_write_1h_tokens": usage.cache_write_1h_tokens,
            "cost_micros": usage.cost_micros, "uncached_micros": usage.uncached_micros, "unpriced": usage.unpriced}


def with_attachments(conn, turns: list[Turn], rows) -> list[Turn]:
    """Turns as read, with the files of those that have some (one query for all of them)."""
    ids = [row.id for row in rows if row.has_files]
    if not ids:
        return turns
    found: dict[int, list[Attachment]] = {}
    for a in conn.execute(sql.ATTACHMENTS, {"turn_ids": ids}):
        found.setdefault(a.turn_id, []).append(Attachment(
            kind=FileKind(a.kind), name=a.name, media_type=a.media_type, slack_file_id=a.slack_file_id,
            sha256=a.sha256, file_id=a.file_id, text=a.text, deleted=a.deleted))
    return [replace(t, attachments=tuple(found[t.id])) if t.id in found else t for t in turns]


def index(conn, channel: Channel, ts: str, session_id: int) -> None:
    """Remember that Slack message `ts` belongs to the session (reactions carry only channel + ts)."""
    conn.execute(sql.INDEX_ONCE[conn.dialect.name], {"team_id": channel.team_id, "channel_id": channel.id, "ts": ts,
                                  "session_id": session_id})


def bump(conn, session_ids: set[int]) -> None:
    """A stored turn changed: caches of these sessions' history are stale."""
    if session_ids:
        conn.execute(update(sessions).where(sessions.c.id.in_(session_ids)).values(version=sessions.c.version + 1))


def settle(conn, pending: Sequence[Turn], status: TurnStatus) -> None:
    conn.execute(sql.SETTLE, {"ids": [t.id for t in pending], "status": status.value})


def take_lease(conn, session_id: int, owner: str, now: datetime, seconds: float) -> bool:
    return conn.execute(sql.TAKE_LEASE, {"session_id": session_id, "owner": owner, "now": now,
                                         "until": lease_until(now, seconds)}).rowcount == 1


def release_lease(conn, session_id: int, owner: str) -> None:
    conn.execute(sql.RELEASE_LEASE, {"session_id": session_id, "owner": owner})


def usage_columns(table):
    """In Usage's field order."""
    return (table.c.input_tokens, table.c.output_tokens, table.c.cache_read_tokens, table.c.cache_write_tokens,
            table.c.searches, table.c.fetches, table.c.cache_write_1h_tokens, table.c.cost_micros,
            table.c.uncached_micros, table.c.unpriced)


def usage_total(table):
    """Every token a model call read and wrote (Usage.total), as SQL."""
    return table.c.input_tokens + table.c.output_tokens + table.c.cache_read_tokens + table.c.cache_write_tokens


def parent_key(channel: Channel) -> str:
    """The unique key of the channel's parent session."""
    return f"{channel.team_id}:{channel.id}"


def insert_parent(conn, channel: Channel, now: datetime, next_fork_number: int = 0) -> int:
    """A new parent session for the channel (raises IntegrityError when it has one)."""
    return conn.execute(
        insert(sessions)
        .values(kind="parent", channel_id=channel.id, team_id=channel.team_id, parent_key=parent_key(channel),
                status="open", next_fork_number=next_fork_number, created_at=now, last_activity_at=now)
        .returning(sessions.c.id)
    ).scalar_one()


def in_channel(channel: Channel):
    return and_(sessions.c.team_id == channel.team_id, sessions.c.channel_id == channel.id)


def involves(user_id: str):
    """A session the user opened or wrote in."""
    wrote = exists().where(turns.c.session_id == sessions.c.id, turns.c.author_id == user_id)
    return or_(sessions.c.owner_id == user_id, wrote)


def to_session(row) -> Session:
    return Session(id=row.id, channel_id=row.channel_id, team_id=row.team_id,
                   fork=to_fork(row) if row.kind == "fork" else None, pruned_before_seq=row.pruned_before_seq or 0)


def to_turn(row) -> Turn:
    return Turn(
        session_id=row.session_id, seq=row.seq, role=Role(row.role), text=row.text,
        author_id=row.author_id, author_name=row.author_name, status=TurnStatus(row.status),
        usage=Usage(row.input_tokens, row.output_tokens, row.cache_read_tokens, row.cache_write_tokens,
                    row.searches, row.fetches, row.cache_write_1h_tokens, row.cost_micros, row.uncached_micros,
                    row.unpriced),
        slack_ts=row.slack_ts, id=row.id, covers_seq=row.covers_seq, stopped_by=row.stopped_by,
        stop_reason=row.stop_reason, created_at=row.created_at,
    )


def to_fork(row) -> Fork:
    return Fork(
        id=row.id, channel_id=row.channel_id, team_id=row.team_id, number=row.number, parent_id=row.parent_id,
        mode=Mode(row.mode), topic=row.topic or "", owner_id=row.owner_id, fork_point_seq=row.fork_point_seq,
        status=ForkStatus(row.status), root_ts=row.root_ts, merged_by=row.merged_by,
        summary_ts=row.summary_ts, last_activity_at=row.last_activity_at,
        inherited=ContextSize(row.inherited_turns or 0, row.inherited_tokens or 0), origin_ts=row.origin_ts,
        depth=row.depth or 1, parent_number=row.parent_number, parent_root_ts=row.parent_root_ts,
        opened_at_seq=row.opened_at_seq, adopted=bool(row.adopted),
        draft=to_draft(row), draft_number=row.draft_number or 0, drafted_seq=row.draft_seq,
        summary_edited_by=row.summary_edited_by,
        instructions=row.instructions, model=row.model, tools=tools_of(row.tools),
        connectors=connector_list.loads(row.connectors), effort=row.effort,
        pruned_before_seq=row.pruned_before_seq or 0,
        private_of=row.private_of, merge_guidance=row.merge_guidance or "", merge_taken=row.merge_owner is not None,
        created_at=row.created_at,
    )


def to_draft(row) -> Draft | None:
    if row.draft_text is None:
        return None
    return Draft(number=row.draft_number, text=row.draft_text, seq=row.draft_seq or 0, ts=row.draft_ts,
                 requested_by=row.draft_by or "",
                 usage=Usage(row.draft_input_tokens or 0, row.draft_output_tokens or 0))


def snapshot(conn, channel: Channel, parent: Fork | None, defaults: ChannelSettings) -> dict:
    """The settings a fork opened now keeps for its whole life: its parent fork's, or its channel's
    choices now over `defaults` (so a later change of either never reaches it). Connectors are kept
    as names, URLs and allowed tools — their tokens are read at each request."""
    from .connectors import read  # connectors.py reads tool lists with this module's helpers

    if parent is not None:
        return {"instructions": parent.instructions, "model": parent.model, "tools": tools_text(parent.tools),
                "connectors": connector_list.dumps(parent.connectors) if parent.connectors else None,
                "effort": parent.effort}
    row = conn.execute(select(channel_settings.c.instructions, channel_settings.c.model, channel_settings.c.tools,
                              channel_settings.c.connectors_chosen, channel_settings.c.effort)
                       .where(channel_settings.c.team_id == channel.team_id,
                              channel_settings.c.channel_id == channel.id)).first()
    chosen = ChannelSettings(row.instructions, row.model, tools=tools_of(row.tools), effort=row.effort,
                             connectors=read(conn, channel) if row.connectors_chosen else None) \
        if row else ChannelSettings()
    kept = chosen.connectors if chosen.connectors is not None else defaults.connectors
    return {"instructions": chosen.instructions or defaults.instructions, "model": chosen.model or defaults.model,
            "tools": tools_text(chosen.tools if chosen.tools is not None else defaults.tools),
            "connectors": connector_list.dumps(kept) if kept else None, "effort": chosen.effort or defaults.effort}


def tools_of(text: str | None) -> tuple[str, ...] | None:
    """A comma list of tool names as stored (NULL: the default)."""
    return None if text is None else tuple(t for t in text.split(",") if t)


def tools_text(tools: tuple[str, ...] | None) -> str | None:
    return None if tools is None else ",".join(tools)
