"""An in-memory implementation of the store ports, for use-case tests that run in milliseconds.

It passes the same contract tests as the SQL store on SQLite and PostgreSQL (tests/store), so the
three cannot drift: each method holds one lock for its whole run, which makes it atomic.
"""
from __future__ import annotations

from bot.services.ports import Clock, Store

from .agent import MemoryPane, MemoryPrivateForks, MemoryStops
from .channel_settings import MemoryChannelSettings, MemoryConnectorTokens, MemoryConnectorUse, MemorySpending
from .departures import MemoryDepartures
from .erasure import MemoryErasure
from .files import MemoryFeedback, MemoryFiles
from .inbox import MemoryClaims, MemoryInbox
from .memories import MemoryMemories
from .merges import MemoryMerges
from .queue import MemoryTurnQueue
from .reviews import MemoryReviews
from .sessions import MemorySessions
from .state import Memory
from .upkeep import MemoryUpkeep
from .views import MemoryViews


def memory_store(clock: Clock) -> Store:
    memory = Memory(clock)
    sessions, turns = MemorySessions(memory), MemoryTurnQueue(memory)  # each also adopts / raises, edits turns
    return Store(work=memory.work, claims=MemoryClaims(memory), inbox=MemoryInbox(memory), sessions=sessions, adoptions=sessions,
                 private=MemoryPrivateForks(memory, sessions.parent_id), budgets=sessions, turns=turns, leases=turns, edits=turns, merges=MemoryMerges(memory), reviews=MemoryReviews(memory),
                 upkeep=MemoryUpkeep(memory), views=MemoryViews(memory), files=MemoryFiles(memory),
                 feedback=MemoryFeedback(memory), channel_settings=MemoryChannelSettings(memory),
                 connector_tokens=MemoryConnectorTokens(memory), connector_use=MemoryConnectorUse(memory),
                 stops=MemoryStops(memory), pane=MemoryPane(memory), spending=MemorySpending(memory),
                 erasure=MemoryErasure(memory), departures=MemoryDepartures(memory),
                 memories=MemoryMemories(memory), clock=clock,
                 check=lambda process: None)
