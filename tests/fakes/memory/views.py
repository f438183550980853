"""Read-only figures, in memory (see bot/store/views.py for the rules)."""
from __future__ import annotations

from bot.domain.context import ESTIMATED_CHARS_PER_TOKEN, UNSEEN
from bot.domain.model import Channel, ChannelEconomy, ContextSize, ForkStats, Role, Usage

from .state import Memory


class MemoryViews:
    def __init__(self, memory: Memory):
        self.m = memory

    def stats(self, fork_id: int) -> ForkStats:
        with self.m.lock:
            seen = self._seen(fork_id)
            burned = sum((t.usage for t in seen), Usage())
            turns = sum(1 for t in seen if t.role in (Role.USER, Role.ASSISTANT))
            row = self.m.sessions[fork_id]
            return ForkStats(turns, burned + row.draft_usage, row.summary_tokens or 0)

    def context_size(self, session_id: int, upto_seq: int | None = None) -> ContextSize:
        with self.m.lock:
            seen = [t for t in self._seen(session_id) if upto_seq is None or t.seq <= upto_seq]
        covers = max((t.covers_seq for t in seen if t.role is Role.COMPACTION), default=None)
        count = sum(1 for t in seen if t.seq > (covers or 0) and t.role is not Role.COMPACTION)
        reported = [t for t in seen if t.role is Role.ASSISTANT and t.usage.total > 0]
        since = reported[-1].seq if reported else 0
        chars = sum(len(t.text) for t in seen if t.seq > since and t.role is not Role.COMPACTION)
        tokens = (reported[-1].usage.total if reported else 0) + chars // ESTIMATED_CHARS_PER_TOKEN
        return ContextSize(turns=count + (1 if covers else 0), tokens=tokens)

    def economy(self, team_id: str, user_id: str) -> list[ChannelEconomy]:
        with self.m.lock:
            took_part = self.m.involves(user_id)
            return self._economy({s.channel for s in self.m.sessions.values() if s.team_id == team_id and took_part(s)})

    def channel_economy(self, channel: Channel) -> ChannelEconomy:
        with self.m.lock:
            found = self._economy({channel})
        return found[0] if found else ChannelEconomy(channel.id, 0, 0)

    def _economy(self, channels: set[Channel]) -> list[ChannelEconomy]:
        figures: dict[Channel, list[int]] = {}
        for session in self.m.sessions.values():
            if session.channel not in channels:
                continue
            for row in self.m.rows(session.id):
                turn, sums = row.turn, figures.setdefault(session.channel, [0] * 6)
                sums[0] += turn.usage.total if session.kind == "fork" else 0
                sums[1] += turn.usage.output_tokens if turn.role is Role.SUMMARY and session.kind == "parent" else 0
                sums[2] += turn.usage.searches
                sums[3] += turn.usage.fetches
        for (channel, _, _), value in self.m.feedback.items():
            if channel in figures:
                figures[channel][4 if value == "good" else 5] += 1
        return [ChannelEconomy(channel.id, *sums) for channel, sums in sorted(figures.items()) if any(sums)]

    def _seen(self, session_id: int):
        return [r.turn for r in self.m.rows(session_id) if not r.deleted and r.turn.status not in UNSEEN]
