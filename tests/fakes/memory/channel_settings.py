"""Channels' own settings, in memory (see bot/store/channels.py)."""
from __future__ import annotations

from dataclasses import replace

from bot.domain.conditions import holds
from bot.domain.model import Channel, Usage
from bot.domain.queue import being_opened
from bot.domain.settings import ChannelSettings
from bot.domain.spend import Reservation, Spent, SpendReport, day_of, month_of
from bot.services.ports import Standing

from .state import Memory


class MemoryChannelSettings:
    def __init__(self, memory: Memory):
        self.m = memory

    def of(self, channel: Channel) -> ChannelSettings:
        with self.m.lock:
            return self.m.settings.get(channel, ChannelSettings())

    def of_at_the_door(self, channel: Channel) -> ChannelSettings:
        return self.of(channel)

    def save(self, channel: Channel, chosen: ChannelSettings, by: str) -> None:
        with self.m.lock:
            self.m.settings[channel] = chosen
            names = {c.name for c in chosen.connectors or ()}  # a connector that goes takes its token
            self.m.tokens[channel] = {n: t for n, t in self.m.tokens.get(channel, {}).items() if n in names}

    def shortest(self) -> tuple[float | None, float | None]:
        with self.m.lock:
            chosen = list(self.m.settings.values())
        idle = [s.idle_reminder for s in chosen if s.idle_reminder is not None]
        expiry = [s.expiry for s in chosen if s.expiry is not None]
        return min(idle, default=None), min(expiry, default=None)


class MemoryConnectorTokens:
    """Connectors' sealed tokens, in memory (see bot/store/connectors.py)."""

    def __init__(self, memory: Memory):
        self.m = memory

    def sealed(self, channel: Channel) -> dict[str, str]:
        with self.m.lock:
            return dict(self.m.tokens.get(channel, {}))

    def keep(self, channel: Channel, sealed) -> None:
        with self.m.lock:
            names = {c.name for c in self.m.settings.get(channel, ChannelSettings()).connectors or ()}
            self.m.tokens[channel] = {n: t for n, t in sealed.items() if n in names}


class MemoryConnectorUse:
    """MCP tool calls per connector and fork, in memory (see bot/store/connectors.py)."""

    def __init__(self, memory: Memory):
        self.m = memory

    def record(self, channel: Channel, fork_number: int, calls) -> None:
        with self.m.lock:
            counts = self.m.connector_calls.setdefault(channel, {}).setdefault(fork_number, {})
            for connector, count in calls.items():
                counts[connector] = counts.get(connector, 0) + count

    def in_channel(self, channel: Channel) -> dict[int, dict[str, int]]:
        with self.m.lock:
            return {number: dict(sorted(counts.items()))
                    for number, counts in sorted(self.m.connector_calls.get(channel, {}).items())}


class MemorySpending:
    """Each channel's estimated spend per day, in memory (see bot/store/channels.py)."""

    def __init__(self, memory: Memory):
        self.m = memory

    def chosen(self, channel: Channel, thread_ts: str | None = None) -> Standing:
        with self.m.lock:
            found = standing(self.m, channel)
            if thread_ts is None:
                return found
            row = self.m.sessions.get(self.m.messages.get((channel, thread_ts), 0))
            if row and row.kind == "fork":
                return replace(found, fork=row.fork())
            opening = being_opened(self.m.clock())
            return replace(found, opening=any(s.channel == channel and holds(opening, s)
                                              for s in self.m.sessions.values()))

    def reserve(self, channel: Channel, micros: int, cap_micros: int,
                reply_id: int | None = None) -> Reservation | None:
        with self.m.lock:
            key = (channel, day_of(self.m.clock()))
            if month(self.m, channel).cost_micros + self.m.reserved.get(key, 0) >= cap_micros:
                return None
            self.m.reserved[key] = self.m.reserved.get(key, 0) + micros
            reservation = Reservation(channel, key[1], micros, reply_id)
            if reply_id is not None:
                self.m.kept_with[reply_id] = reservation
            return reservation

    def add(self, home: Channel, usage: Usage, in_fork: bool) -> None:
        with self.m.lock:
            self.m.add_spend_to(home, usage, in_fork)

    def release(self, reservation: Reservation) -> None:
        with self.m.lock:
            self.m.release(reservation)

    def report(self, channel: Channel) -> SpendReport:
        with self.m.lock:
            now = self.m.clock()
            return SpendReport(today=self.m.spend.get((channel, day_of(now)), Spent()), month=self._month(channel),
                               month_name=now.strftime("%B %Y"))

    def months(self, team_id: str) -> dict[str, Spent]:
        with self.m.lock:
            channels = {channel for channel, _ in self.m.spend if channel.team_id == team_id}
            return {c.id: figures for c in channels if (figures := self._month(c)) != Spent()}

    def _month(self, channel: Channel) -> Spent:
        return month(self.m, channel)


def month(m: Memory, channel: Channel) -> Spent:
    first, following = month_of(m.clock())
    return sum((figures for (c, day), figures in m.spend.items() if c == channel and first <= day < following), Spent())


def standing(m: Memory, channel: Channel) -> Standing:
    """What a turn reads of its channel (the caller holds the lock)."""
    parent = next((row.id for row in m.sessions.values() if row.kind == "parent" and row.channel == channel), None)
    return Standing(m.settings.get(channel, ChannelSettings()), month(m, channel).cost_micros, parent,
                    reserved_micros=m.reserved.get((channel, day_of(m.clock())), 0))
