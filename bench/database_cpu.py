"""The database's CPU: what PostgreSQL's backend processes serving one database used, read from Linux /proc
(the bench's server runs on this machine; pg_stat_statements, which would count it per statement, must be
loaded when the server starts).

A backend's process title names its database ("postgres: 15/main: postgres threadfork_bench …"), so the
postmaster's children serving it are found by their command line. Backends are watched every WATCH_EVERY seconds
while a measurement runs, so one that ends meanwhile (a connection the pool closed) is counted up to its last
reading (with a pool that keeps its connections, every one of them to its end)."""
from __future__ import annotations

import threading
import time
from pathlib import Path

WATCH_EVERY = 0.1


def _cpu(pid: int) -> float | None:
    try:
        return time.clock_gettime(((~pid) << 3) | 2)
    except OSError:  # gone
        return None


def _postmasters() -> list[int]:
    """PostgreSQL's server processes on this machine (a backend's parent)."""
    found = []
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            try:
                line = (entry / "cmdline").read_bytes().split(b"\0")
            except OSError:
                continue
            if line and line[0].endswith(b"postgres") and b"-D" in line:
                found.append(int(entry.name))
    return found


class DatabaseCpu:
    """CPU seconds PostgreSQL's backends spent for one database between `start` and `stop`."""

    def __init__(self, database: str):
        self.marker = f" {database} ".encode()
        self.postmasters = _postmasters()
        self._first: dict[int, float] = {}
        self._last: dict[int, float] = {}
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None

    @property
    def available(self) -> bool:
        return bool(self.postmasters)

    def _backends(self) -> list[int]:
        pids = []
        for master in self.postmasters:
            for task in Path(f"/proc/{master}/task").glob("*"):
                try:
                    pids += [int(p) for p in (task / "children").read_text().split()]
                except OSError:
                    continue
        mine = []
        for pid in pids:
            try:
                if self.marker in Path(f"/proc/{pid}/cmdline").read_bytes().replace(b"\0", b" ") + b" ":
                    mine.append(pid)
            except OSError:
                continue
        return mine

    def _read(self, first: bool = False) -> None:
        for pid in self._backends():
            used = _cpu(pid)
            if used is None:
                continue
            # a backend seen first mid-measurement started meanwhile: all its CPU counts
            self._first.setdefault(pid, used if first else 0.0)
            self._last[pid] = used

    def start(self) -> DatabaseCpu:
        self._first, self._last = {}, {}
        self._read(first=True)
        self._stop.clear()
        self._thread = threading.Thread(target=self._watch, daemon=True, name="database-cpu")
        self._thread.start()
        return self

    def _watch(self) -> None:
        while not self._stop.wait(WATCH_EVERY):
            self._read()

    def stop(self) -> float:
        """CPU seconds used since `start`."""
        self._stop.set()
        if self._thread:
            self._thread.join()
        self._read()
        return sum(self._last[pid] - self._first[pid] for pid in self._last)

