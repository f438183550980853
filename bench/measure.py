"""What the bench reads about processes and the machine (Linux /proc), and its statistics."""
from __future__ import annotations

import os
import platform
import threading
import time
from pathlib import Path

from tests.processes import BotProcess, worker_pids


def pids(bot: BotProcess) -> list[int]:
    """The bot's process and the worker processes it forked (THREADFORK_PROCESSES)."""
    return [bot.proc.pid, *sorted(worker_pids(bot.proc.pid))]


def peak_rss_mb(pid: int) -> float:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmHWM:"):
            return int(line.split()[1]) / 1024
    return float("nan")


def pss_mb(pid: int) -> float:
    """The process's proportional set size: its private pages, plus each page it shares divided by how many
    processes share it (Linux /proc/PID/smaps_rollup)."""
    for line in Path(f"/proc/{pid}/smaps_rollup").read_text().splitlines():
        if line.startswith("Pss:"):
            return int(line.split()[1]) / 1024
    return float("nan")


class PeakTogether:
    """The peak of processes' proportional set sizes summed, sampled every EVERY seconds while it runs: what they
    take of the machine's memory together, a page that a gunicorn master and its workers share since the fork
    counted once (summed peak RSSs count it in each, and add peaks reached at different moments)."""
    EVERY = 0.1

    def __init__(self, processes: list[int]):
        self.processes, self.peak = processes, 0.0
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._watch, daemon=True, name="peak-together")

    def _sample(self) -> None:
        try:
            self.peak = max(self.peak, sum(pss_mb(pid) for pid in self.processes))
        except OSError:  # a process gone
            pass

    def _watch(self) -> None:
        while not self._stop.wait(self.EVERY):
            self._sample()

    def start(self) -> PeakTogether:
        self._sample()
        self._thread.start()
        return self

    def stop(self) -> float:
        self._stop.set()
        self._thread.join()
        self._sample()
        return self.peak


def percentile(values: list[float], p: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(round(p / 100 * (len(ordered) - 1))))]


def machine() -> str:
    cpu = next((l.split(":", 1)[1].strip() for l in Path("/proc/cpuinfo").read_text().splitlines()
                if l.startswith("model name")), platform.processor())
    memory = next((int(l.split()[1]) // 1024 // 1024 for l in Path("/proc/meminfo").read_text().splitlines()
                   if l.startswith("MemTotal")), 0)
    return (f"{os.cpu_count()} cores ({cpu}), {memory} GiB RAM, {platform.system()} {platform.release()}, "
            f"Python {platform.python_version()}")
