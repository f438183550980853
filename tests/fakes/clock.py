"""A clock that tests move instead of sleeping."""
from __future__ import annotations

import threading
from datetime import datetime, timedelta, timezone


class FakeClock:
    """Naive UTC like the store's clock; each reading ticks a microsecond so that events keep their order."""

    def __init__(self):
        self.now = datetime.now(timezone.utc).replace(tzinfo=None)
        self._lock = threading.Lock()

    def __call__(self) -> datetime:
        with self._lock:
            self.now += timedelta(microseconds=1)
            return self.now

    def advance(self, **delta) -> None:
        with self._lock:
            self.now += timedelta(**delta)
