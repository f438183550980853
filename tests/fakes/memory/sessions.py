"""Parents and forks, in memory (see bot/store/sessions.py for the rules)."""
from __future__ import annotations

from collections.abc import Collection
from decimal import Decimal

from bot.domain.model import Channel, ContextSize, Fork, ForkStatus, Mode, Role, Session, TurnStatus
from bot.domain.queue import lease_until
from bot.domain.settings import ChannelSettings
from bot.domain.transitions import UNFINISHED
from bot.services.ports import Adopted, Opener

from .adoption import MemoryAdoptions
from .state import Memory, SessionRow


class MemorySessions:
    def __init__(self, memory: Memory):
        self.m = memory
        self._adoptions = MemoryAdoptions(memory, self.parent_id)

    def parent_id(self, channel: Channel) -> int:
        with self.m.lock:
            for row in self.m.sessions.values():
                if row.kind == "parent" and row.channel == channel:
                    return row.id
            now = self.m.clock()
            row = SessionRow(self.m.new_id(), "parent", channel.id, channel.team_id, now, now)
            self.m.sessions[row.id] = row
            return row.id

    def session(self, session_id: int) -> Session:
        with self.m.lock:
            return self.m.sessions[session_id].session()

    def create_fork(self, channel: Channel, owner_id: str, mode: Mode, topic: str,
                    origin_ts: str | None = None, parent: Fork | None = None,
                    defaults: ChannelSettings = ChannelSettings(), opener: Opener | None = None) -> Fork:
        with self.m.lock:
            counter = self.m.sessions[self.parent_id(channel)]
            counter.next_fork_number += 1
            source = self.m.sessions[parent.id] if parent else counter
            fork_point = source.next_seq if origin_ts is None else self._seq_at(source.id, origin_ts)
            now = self.m.clock()
            row = SessionRow(self.m.new_id(), "fork", channel.id, channel.team_id, now, now, parent_id=source.id,
                             number=counter.next_fork_number, mode=mode, topic=topic, owner_id=owner_id,
                             fork_point_seq=fork_point if mode is Mode.INHERIT and fork_point > 0 else None,
                             origin_ts=origin_ts, opened_at_seq=source.next_seq,
                             depth=parent.depth + 1 if parent else 1,
                             parent_number=parent.number if parent else None,
                             parent_root_ts=parent.root_ts if parent else None,
                             **self.m.snapshot(channel, parent, defaults))
            self.m.sessions[row.id] = row
            if opener:  # leased to its opener, its topic their first turn, waiting (as bot/store/sessions.py)
                row.lease_owner, row.lease_until = opener.holder, lease_until(now, opener.lease_seconds)
                if topic:
                    self.m.append(row.id, Role.USER, topic, TurnStatus.PENDING, author_id=opener.author_id,
                                  author_name=opener.author_name)
            return row.fork()

    def _seq_at(self, session_id: int, ts: str) -> int:
        stamped = [r.turn for r in self.m.rows(session_id) if r.turn.slack_ts is not None]
        earlier = [t.seq for t in stamped if Decimal(t.slack_ts) <= Decimal(ts)]
        return max(earlier, default=0)

    def set_root(self, fork_id: int, root_ts: str, inherited: ContextSize) -> None:
        with self.m.lock:
            row = self.m.sessions[fork_id]
            row.root_ts, row.inherited = root_ts, inherited
            self.m.index(row.channel, root_ts, fork_id)

    def adopt_thread(self, channel: Channel, root_ts: str, owner_id: str, holder: str,
                     lease_seconds: float, defaults: ChannelSettings = ChannelSettings()) -> Adopted:
        return self._adoptions.adopt(channel, root_ts, owner_id, holder, lease_seconds, defaults)

    def complete_adoption(self, fork_id: int, topic: str, inherited: ContextSize, transcript: str | None,
                          speaker: str, message_ts: Collection[str]) -> None:
        self._adoptions.complete(fork_id, topic, inherited, transcript, speaker, message_ts)

    def fork(self, fork_id: int) -> Fork | None:
        with self.m.lock:
            row = self.m.sessions.get(fork_id)
            return row.fork() if row and row.kind == "fork" else None

    def fork_by_number(self, channel: Channel, number: int) -> Fork | None:
        return self._first(lambda s: s.channel == channel and s.number == number)

    def fork_by_message(self, channel: Channel, ts: str) -> Fork | None:
        with self.m.lock:
            return self.fork(self.m.messages.get((channel, ts), 0))

    def latest_open_fork_of(self, channel: Channel, user_id: str) -> Fork | None:
        with self.m.lock:
            rows = self.m.forks(lambda s: s.channel == channel, lambda s: s.status is ForkStatus.OPEN,
                                self.m.involves(user_id))
            rows.sort(key=lambda s: (s.last_activity_at, s.id), reverse=True)
            return rows[0].fork() if rows else None

    def forks_in(self, channel: Channel, status: ForkStatus) -> list[Fork]:
        with self.m.lock:
            rows = self.m.forks(lambda s: s.channel == channel, lambda s: s.status is status)
            return [r.fork() for r in sorted(rows, key=lambda s: s.number)]

    def children_of(self, fork_id: int) -> list[Fork]:
        with self.m.lock:
            rows = self.m.forks(lambda s: s.parent_id == fork_id,
                                lambda s: s.status in UNFINISHED)
            return [r.fork() for r in sorted(rows, key=lambda s: s.number)]

    def fork_counts(self, channel: Channel) -> dict[ForkStatus, int]:
        with self.m.lock:
            counts: dict[ForkStatus, int] = {}
            for row in self.m.forks(lambda s: s.channel == channel):
                counts[row.status] = counts.get(row.status, 0) + 1
            return counts

    def open_forks_of(self, team_id: str, user_id: str) -> list[Fork]:
        with self.m.lock:
            rows = self.m.forks(lambda s: s.team_id == team_id, lambda s: s.status is ForkStatus.OPEN,
                                self.m.involves(user_id))
            return [r.fork() for r in sorted(rows, key=lambda s: s.last_activity_at, reverse=True)]

    def raise_budget(self, fork_id: int, by: int) -> None:
        with self.m.lock:
            self.m.sessions[fork_id].budget_extra += by

    def budget_extra(self, fork_id: int) -> int:
        with self.m.lock:
            return self.m.sessions[fork_id].budget_extra

    def _first(self, condition) -> Fork | None:
        with self.m.lock:
            rows = self.m.forks(condition)
            return rows[0].fork() if rows else None
