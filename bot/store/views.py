"""Read-only figures: what a fork burned against what it returned, how big a context is, and the
token economy per channel. A few indexed queries each, whatever a session's length."""
from __future__ import annotations

from sqlalchemy import func, select

from ..domain.context import ESTIMATED_CHARS_PER_TOKEN, UNSEEN
from ..domain.model import ChannelEconomy, ContextSize, ForkStats, Role, Usage
from .database import Database
from .rows import involves, usage_columns, usage_total
from .tables import sessions, turns

_SEEN = turns.c.status.not_in([s.value for s in UNSEEN])


class SqlViews:
    def __init__(self, db: Database):
        self.db = db

    def stats(self, fork_id: int) -> ForkStats:
        with self.db.reading() as conn:
            row = conn.execute(
                select(
                    func.count(turns.c.id).filter(turns.c.role.in_([Role.USER.value, Role.ASSISTANT.value])),
                    *(func.coalesce(func.sum(c), 0) for c in usage_columns(turns)),
                ).where(turns.c.session_id == fork_id, turns.c.deleted.is_(False), _SEEN)
            ).one()
            summary_tokens = conn.scalar(select(sessions.c.summary_tokens).where(sessions.c.id == fork_id))
            return ForkStats(turns=row[0], burned=Usage(*(int(v) for v in row[1:])),
                             summary_tokens=summary_tokens or 0)

    def context_size(self, session_id: int, upto_seq: int | None = None) -> ContextSize:
        in_range = (turns.c.session_id == session_id, turns.c.deleted.is_(False), _SEEN,
                    *([turns.c.seq <= upto_seq] if upto_seq is not None else []))
        total = usage_total(turns)
        with self.db.reading() as conn:
            covers = conn.scalar(select(func.max(turns.c.covers_seq)).where(
                *in_range, turns.c.role == Role.COMPACTION.value))
            count = conn.scalar(select(func.count()).where(*in_range, turns.c.seq > (covers or 0),
                                                          turns.c.role != Role.COMPACTION.value))
            last = conn.execute(
                select(turns.c.seq, total.label("total"))
                .where(*in_range, turns.c.role == Role.ASSISTANT.value, total > 0)
                .order_by(turns.c.seq.desc()).limit(1)
            ).first()
            since = last.seq if last else 0
            chars = conn.scalar(select(func.coalesce(func.sum(func.length(turns.c.text)), 0)).where(
                *in_range, turns.c.seq > since, turns.c.role != Role.COMPACTION.value)) or 0
        tokens = (last.total if last else 0) + int(chars) // ESTIMATED_CHARS_PER_TOKEN
        return ContextSize(turns=count + (1 if covers else 0), tokens=tokens)

    def economy(self, user_id: str) -> list[ChannelEconomy]:
        theirs = select(sessions.c.channel_id).where(involves(user_id))
        with self.db.reading() as conn:
            burned = dict(conn.execute(
                select(sessions.c.channel_id, func.sum(usage_total(turns)))
                .join(turns, turns.c.session_id == sessions.c.id)
                .where(sessions.c.kind == "fork", sessions.c.channel_id.in_(theirs))
                .group_by(sessions.c.channel_id)
            ).all())
            returned = dict(conn.execute(
                select(sessions.c.channel_id, func.sum(turns.c.output_tokens))
                .join(turns, turns.c.session_id == sessions.c.id)
                .where(turns.c.role == Role.SUMMARY.value, sessions.c.channel_id.in_(theirs))
                .group_by(sessions.c.channel_id)
            ).all())
        channels = sorted(set(burned) | set(returned))
        return [ChannelEconomy(c, int(burned.get(c) or 0), int(returned.get(c) or 0)) for c in channels]
