"""Stop requests, private forks and the agent pane, in memory (see bot/store/stops.py, private.py, pane.py)."""
from __future__ import annotations

from collections.abc import Collection

from bot.domain.model import Channel, Fork, ForkStatus, Mode, Role, TurnStatus
from bot.domain.settings import ChannelSettings
from bot.services.ports import Adopted

from .state import Memory, SessionRow


class MemoryStops:
    def __init__(self, memory: Memory):
        self.m = memory

    def stop_in(self, session_id: int, user_id: str) -> int | None:
        with self.m.lock:
            for row in self.m.rows(session_id):
                if self._stoppable(row):
                    row.change(stopped_by=user_id)
                    return row.turn.id
            return None

    def stop_reply(self, channel: Channel, reply_id: int, user_id: str) -> bool:
        with self.m.lock:
            for session in [s for s in self.m.sessions.values() if s.channel == channel]:
                for row in self.m.rows(session.id):
                    if row.turn.id == reply_id and self._stoppable(row):
                        row.change(stopped_by=user_id)
                        return True
            return False

    def requested(self, reply_ids: Collection[int]) -> dict[int, str]:
        wanted = set(reply_ids)
        with self.m.lock:
            return {r.turn.id: r.turn.stopped_by for rows in self.m.turns.values() for r in rows
                    if r.turn.id in wanted and r.turn.stopped_by is not None}

    def streaming(self, session_id: int) -> int | None:
        with self.m.lock:
            return next((r.turn.id for r in reversed(self.m.rows(session_id))
                         if r.turn.status is TurnStatus.STREAMING), None)

    def askers(self, reply_id: int) -> frozenset[str]:
        with self.m.lock:
            for rows in self.m.turns.values():
                reply = next((r.turn for r in rows if r.turn.id == reply_id), None)
                if reply is not None:
                    return frozenset(r.turn.author_id for r in rows if r.turn.seq < reply.seq
                                     and r.turn.role is Role.USER and r.turn.status is TurnStatus.PENDING
                                     and r.turn.author_id)
            return frozenset()

    @staticmethod
    def _stoppable(row) -> bool:
        return row.turn.status is TurnStatus.STREAMING and row.turn.stopped_by is None


class MemoryPrivateForks:
    def __init__(self, memory: Memory, parent_id):
        self.m = memory
        self.parent_id = parent_id

    def open_private_fork(self, home: Channel, dm: Channel, root_ts: str, owner_id: str, topic: str,
                          defaults: ChannelSettings = ChannelSettings()) -> Adopted:
        with self.m.lock:
            existing = self.m.sessions.get(self.m.messages.get((dm, root_ts), 0))
            if existing is not None:
                return Adopted(existing.fork(), new=False)
            counter = self.m.sessions[self.parent_id(dm)]
            counter.next_fork_number += 1
            parent = self.m.sessions[self.parent_id(home)]
            now = self.m.clock()
            row = SessionRow(self.m.new_id(), "fork", dm.id, dm.team_id, now, now, parent_id=parent.id,
                             number=counter.next_fork_number, mode=Mode.INHERIT, topic=topic, owner_id=owner_id,
                             fork_point_seq=parent.next_seq or None, opened_at_seq=parent.next_seq,
                             root_ts=root_ts, private_of=home.id, **self.m.snapshot(home, None, defaults))
            self.m.sessions[row.id] = row
            self.m.index(dm, root_ts, row.id)
            return Adopted(row.fork(), new=True)

    def private_forks_of(self, home: Channel, user_id: str) -> list[Fork]:
        with self.m.lock:
            rows = self.m.forks(lambda s: s.team_id == home.team_id, lambda s: s.private_of == home.id,
                                lambda s: s.owner_id == user_id, lambda s: s.status is ForkStatus.OPEN)
            return [r.fork() for r in sorted(rows, key=lambda s: s.number)]


class MemoryPane:
    def __init__(self, memory: Memory):
        self.m = memory

    def viewed(self, team_id: str, user_id: str, channel_id: str | None, seen_at: str) -> None:
        with self.m.lock:
            _, kept_at = self.m.viewing.get((team_id, user_id), (None, ""))
            if kept_at <= seen_at:
                self.m.viewing[(team_id, user_id)] = (channel_id, seen_at)

    def viewing(self, team_id: str, user_id: str) -> str | None:
        with self.m.lock:
            return self.m.viewing.get((team_id, user_id), (None, ""))[0]
