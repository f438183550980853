"""What this process holds — session leases, merges, kept deliveries — kept alive by a heartbeat
while it works on them, and handed back at once when it shuts down.

A claim lives `ttl` seconds past its last renewal; the heartbeat renews every claim this process
holds every third of that. So a healthy answer may take as long as it likes (it is never taken over
and never told it was interrupted), and work whose process died is taken over by any replica's
sweep within `ttl` plus one sweep interval.
"""
from __future__ import annotations

import logging
import threading
import uuid
from collections.abc import Callable, Iterator
from contextlib import contextmanager

from .ports import Inbox, Merges, Leases

log = logging.getLogger(__name__)


class Liveness:
    def __init__(self, ttl: float, *, inbox: Inbox, leases: Leases, merges: Merges, check: Callable[[str], None]):
        self.inbox, self.leases, self.merges = inbox, leases, merges
        self.check = check  # writes this process's health row; raises when the store can't be written
        self.ttl = ttl
        self.process = uuid.uuid4().hex[:12]
        self._held: dict[str, set[str]] = {"lease": set(), "merge": set(), "delivery": set()}
        self._lock = threading.Lock()

    def healthy(self) -> None:
        """Raises when the store cannot be written."""
        self.check(self.process)

    def new_owner(self) -> str:
        """An owner name for one claim, recognisably this process's in the database."""
        return f"{self.process}:{uuid.uuid4().hex[:16]}"

    @contextmanager
    def holding(self, kind: str, name: str) -> Iterator[str]:
        """Renew `name` (an owner, or a delivery's key) while the block runs."""
        with self._lock:
            self._held[kind].add(name)
        try:
            yield name
        finally:
            with self._lock:
                self._held[kind].discard(name)

    def hold(self, kind: str, name: str) -> None:
        with self._lock:
            self._held[kind].add(name)

    def let_go(self, kind: str, name: str) -> None:
        with self._lock:
            self._held[kind].discard(name)

    def holds(self, kind: str, name: str) -> bool:
        with self._lock:
            return name in self._held[kind]

    def beat(self) -> None:
        """Renew everything held (one write per kind, whatever the count)."""
        leases, merges, deliveries = self._snapshot()
        self.leases.renew_leases(leases, self.ttl)
        self.merges.renew_merges(merges, self.ttl)
        self.inbox.renew(deliveries, self.ttl)

    def release_all(self) -> None:
        """Shutting down: hand every claim back, so another replica resumes the work at once."""
        leases, merges, deliveries = self._snapshot()
        log.info("handing back %s leases, %s merges and %s deliveries", len(leases), len(merges), len(deliveries))
        self.leases.release_leases(leases)
        self.merges.release_merges(merges)
        self.inbox.release(deliveries)

    def _snapshot(self) -> tuple[list[str], list[str], list[str]]:
        with self._lock:
            return list(self._held["lease"]), list(self._held["merge"]), list(self._held["delivery"])
