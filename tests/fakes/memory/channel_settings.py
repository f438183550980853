"""Channels' own settings, in memory (see bot/store/channel_settings.py)."""
from __future__ import annotations

from bot.domain.model import Channel
from bot.domain.settings import ChannelSettings

from .state import Memory


class MemoryChannelSettings:
    def __init__(self, memory: Memory):
        self.m = memory

    def of(self, channel: Channel) -> ChannelSettings:
        with self.m.lock:
            return self.m.settings.get(channel, ChannelSettings())

    def save(self, channel: Channel, chosen: ChannelSettings, by: str) -> None:
        with self.m.lock:
            self.m.settings[channel] = chosen

    def shortest(self) -> tuple[float | None, float | None]:
        with self.m.lock:
            chosen = list(self.m.settings.values())
        idle = [s.idle_reminder for s in chosen if s.idle_reminder is not None]
        expiry = [s.expiry for s in chosen if s.expiry is not None]
        return min(idle, default=None), min(expiry, default=None)
