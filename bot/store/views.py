"""Read-only figures: what a fork burned against what it returned, how big a context is, and the
token economy per channel. A few indexed queries each, whatever a session's length."""
from __future__ import annotations

from sqlalchemy import case, func, select

from ..domain.context import ESTIMATED_CHARS_PER_TOKEN, UNSEEN
from ..domain.model import Channel, ChannelEconomy, ContextSize, ForkStats, Role, Usage
from .work import Database
from .rows import involves, usage_columns, usage_total
from .tables import feedback, sessions, turns

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
            fork = conn.execute(select(sessions.c.summary_tokens, sessions.c.draft_input_tokens,
                                       sessions.c.draft_output_tokens).where(sessions.c.id == fork_id)).one()
            drafts = Usage(fork.draft_input_tokens or 0, fork.draft_output_tokens or 0)  # summaries under review
            return ForkStats(turns=row[0], burned=Usage(*(int(v) for v in row[1:])) + drafts,
                             summary_tokens=fork.summary_tokens or 0)

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

    def economy(self, team_id: str, user_id: str) -> list[ChannelEconomy]:
        took_part = select(sessions.c.channel_id).where(sessions.c.team_id == team_id, involves(user_id))
        return self._economy(team_id, sessions.c.channel_id.in_(took_part))

    def channel_economy(self, channel: Channel) -> ChannelEconomy:
        found = self._economy(channel.team_id, sessions.c.channel_id == channel.id)
        return found[0] if found else ChannelEconomy(channel.id, 0, 0)

    def _economy(self, team_id: str, in_channels) -> list[ChannelEconomy]:
        in_fork = case((sessions.c.kind == "fork", usage_total(turns)), else_=0)
        # returned: what entered a channel's conversation (a fork of a fork returns into its parent fork)
        summary = case(((turns.c.role == Role.SUMMARY.value) & (sessions.c.kind == "parent"), turns.c.output_tokens),
                       else_=0)
        with self.db.reading() as conn:
            rows = conn.execute(
                select(sessions.c.channel_id, func.sum(in_fork), func.sum(summary), func.sum(turns.c.searches),
                       func.sum(turns.c.fetches))
                .join(turns, turns.c.session_id == sessions.c.id)
                .where(sessions.c.team_id == team_id, in_channels).group_by(sessions.c.channel_id)).all()
            votes = conn.execute(
                select(feedback.c.channel_id, feedback.c.value, func.count())
                .where(feedback.c.team_id == team_id, feedback.c.channel_id.in_([r[0] for r in rows]))
                .group_by(feedback.c.channel_id, feedback.c.value)).all()
        counted = {(channel, value): count for channel, value, count in votes}
        figures = [ChannelEconomy(channel, int(burned or 0), int(returned or 0), int(searches or 0),
                                  int(fetches or 0), counted.get((channel, "good"), 0), counted.get((channel, "bad"), 0))
                   for channel, burned, returned, searches, fetches in rows]
        return sorted((f for f in figures if f.burned or f.returned or f.searches or f.fetches or f.good or f.bad),
                      key=lambda f: f.channel_id)
