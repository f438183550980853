"""Real deletes, in memory (see bot/store/erasure.py for the rules)."""
from __future__ import annotations

from collections.abc import Callable
from datetime import datetime

from bot.domain.model import Channel, ForkStatus

from .state import Memory, SessionRow

CLOSED = (ForkStatus.MERGED, ForkStatus.ABANDONED)


class MemoryErasure:
    def __init__(self, memory: Memory):
        self.m = memory

    def forget_channel(self, channel: Channel) -> int:
        with self.m.lock:
            parent = next((s for s in self.m.sessions.values() if s.kind == "parent" and s.channel == channel), None)
            doomed = {s.id for s in self.m.sessions.values() if s.channel == channel}
            below = {s.id for s in self.m.sessions.values() if s.team_id == channel.team_id and s.private_of == channel.id}
            while below - doomed:  # the private forks of its conversation, and their forks: they read its turns
                doomed |= below
                below = {s.id for s in self.m.sessions.values() if s.parent_id in below}
            deleted = self._delete(lambda s: s.id in doomed)
            self.m.feedback = {key: value for key, value in self.m.feedback.items() if key[0] != channel}
            self.m.tokens.pop(channel, None)
            self.m.connector_calls.pop(channel, None)
            self.m.spend = {key: figures for key, figures in self.m.spend.items() if key[0] != channel}
            self.m.memory_entries = {i: e for i, e in self.m.memory_entries.items() if e.channel != channel}
            if parent and parent.next_fork_number:  # a fresh parent that only carries the fork numbering on
                now = self.m.clock()
                fresh = SessionRow(self.m.new_id(), "parent", channel.id, channel.team_id, now, now,
                                   next_fork_number=parent.next_fork_number)
                self.m.sessions[fresh.id] = fresh
            return deleted[0]

    def forget_team(self, team_id: str) -> int:
        with self.m.lock:
            deleted = self._delete(lambda s: s.team_id == team_id)
            self.m.settings = {channel: chosen for channel, chosen in self.m.settings.items()
                               if channel.team_id != team_id}
            self.m.viewing = {key: seen for key, seen in self.m.viewing.items() if key[0] != team_id}
            self.m.tokens = {channel: kept for channel, kept in self.m.tokens.items() if channel.team_id != team_id}
            self.m.connector_calls = {channel: kept for channel, kept in self.m.connector_calls.items()
                                      if channel.team_id != team_id}
            self.m.feedback = {key: value for key, value in self.m.feedback.items() if key[0].team_id != team_id}
            self.m.spend = {key: figures for key, figures in self.m.spend.items() if key[0].team_id != team_id}
            self.m.memory_entries = {i: e for i, e in self.m.memory_entries.items() if e.channel.team_id != team_id}
            return deleted[0]

    def prune(self, before: datetime) -> int:
        with self.m.lock:
            doomed = {s.id for s in self.m.forks(lambda s: s.status in CLOSED, lambda s: s.last_activity_at < before,
                                                 lambda s: (s.closed_at or s.last_activity_at) < before)}
            while True:  # a fork that stays still reads its parent fork's turns
                read = {s.parent_id for s in self.m.sessions.values() if s.id not in doomed} & doomed
                if not read:
                    break
                doomed -= read
            removed = self._delete(lambda s: s.id in doomed)[1]
            for session in self.m.sessions.values():
                rows = self.m.rows(session.id)
                old = [r.turn.seq for r in rows if r.created_at < before]
                if old:
                    cut = max(old)
                    self.m.turns[session.id] = [r for r in rows if r.turn.seq > cut]
                    removed += len(rows) - len(self.m.turns[session.id])
                    session.pruned_before_seq = cut + 1
                    if session.status is ForkStatus.OPEN:
                        session.draft_text = session.draft_seq = None  # it speaks of the turns just deleted
            for fork in self.m.forks(lambda s: s.topic != "", lambda s: s.created_at < before):
                fork.topic = ""  # people's words, as old as the fork
            self.m.memory_entries = {i: e for i, e in self.m.memory_entries.items() if e.created_at >= before}
            return removed

    def _delete(self, condition: Callable[[SessionRow], bool]) -> tuple[int, int]:
        """Delete the sessions that meet the condition and all that hangs off them: (sessions, turns)."""
        ids = {s.id for s in self.m.sessions.values() if condition(s)}
        turns = sum(len(self.m.turns.pop(i, [])) for i in ids)
        for rows in self.m.turns.values():
            for row in rows:
                if row.source_fork_id in ids:
                    row.source_fork_id = None
        self.m.messages = {key: sid for key, sid in self.m.messages.items() if sid not in ids}
        for i in ids:
            del self.m.sessions[i]
        return len(ids), turns

    def drop_unused_files(self, kept_before: datetime) -> list[str]:
        with self.m.lock:
            used = {a.sha256 for rows in self.m.turns.values() for row in rows for a in row.turn.attachments}
            gone = [sha for sha, at in self.m.files_kept_at.items() if at < kept_before and sha not in used]
            dropped = [self.m.files.pop(sha) for sha in gone]
            for sha in gone:
                del self.m.files_kept_at[sha]
            return [f.file_id for f in dropped if f.file_id]
