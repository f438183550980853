"""Adopting a thread as a fork, in memory (see bot/store/adoption.py for the rules): the memory's one
lock makes each step atomic, as a transaction is."""
from __future__ import annotations

from collections.abc import Collection
from decimal import Decimal

from bot.domain.model import Channel, ContextSize, Mode, Role, Turn, TurnStatus
from bot.domain.queue import lease_until
from bot.domain.settings import ChannelSettings
from bot.services.ports import Adopted

from .state import Memory, SessionRow, TurnRow

OPENING_SEQ = 1


class MemoryAdoptions:
    def __init__(self, memory: Memory, parent_id):
        self.m = memory
        self.parent_id = parent_id

    def adopt(self, channel: Channel, root_ts: str, owner_id: str, holder: str, lease_seconds: float,
              defaults: ChannelSettings = ChannelSettings()) -> Adopted:
        with self.m.lock:
            existing = self.m.sessions.get(self.m.messages.get((channel, root_ts), 0))
            if existing is not None:
                return Adopted(existing.fork(), new=False)
            parent = self.m.sessions[self.parent_id(channel)]
            parent.next_fork_number += 1
            stamped = [r.turn for r in self.m.rows(parent.id) if r.turn.slack_ts is not None]
            fork_point = max((t.seq for t in stamped if Decimal(t.slack_ts) < Decimal(root_ts)), default=0)
            now = self.m.clock()
            row = SessionRow(self.m.new_id(), "fork", channel.id, channel.team_id, now, now, parent_id=parent.id,
                             number=parent.next_fork_number, mode=Mode.INHERIT, owner_id=owner_id,
                             fork_point_seq=fork_point or None, opened_at_seq=parent.next_seq, adopted=True,
                             root_ts=root_ts, next_seq=OPENING_SEQ, lease_owner=holder,
                             lease_until=lease_until(now, lease_seconds),
                             **self.m.snapshot(channel, None, defaults))
            self.m.sessions[row.id] = row
            self.m.index(channel, root_ts, row.id)
            return Adopted(row.fork(), new=True)

    def complete(self, fork_id: int, topic: str, inherited: ContextSize, transcript: str | None, speaker: str,
                 message_ts: Collection[str]) -> None:
        with self.m.lock:
            row = self.m.sessions[fork_id]
            now = self.m.clock()
            row.topic, row.inherited, row.last_activity_at = topic, inherited, now
            if transcript is not None:
                turns = self.m.rows(fork_id)
                if any(r.turn.seq == OPENING_SEQ for r in turns):
                    raise ValueError(f"fork {fork_id} already has its opening turn")
                turn = Turn(fork_id, OPENING_SEQ, Role.USER, transcript, None, speaker, TurnStatus.ANSWERED,
                            id=self.m.new_id())
                turns.insert(0, TurnRow(turn, now))  # rows stay in seq order
            for ts in message_ts:
                self.m.index(row.channel, ts, fork_id)
