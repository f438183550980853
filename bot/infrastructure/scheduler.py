"""APScheduler runs the sweep inside each bot process, and every delayed call (the 👀 after THINKING_DELAY):
one scheduler, made by the composition root. Jobs only call services; every action a sweep takes is claimed
atomically in the store, so any number of replicas can run it."""
from __future__ import annotations

import logging
import threading
from collections.abc import Callable
from typing import Protocol
from datetime import datetime, timedelta, timezone

from apscheduler.jobstores.base import JobLookupError
from apscheduler.schedulers.background import BackgroundScheduler
from apscheduler.schedulers.base import BaseScheduler


log = logging.getLogger(__name__)

SWEEP_JOB = "threadfork-sweep"


class Leased(Protocol):
    ttl: float  # seconds a claim lives past its last renewal


class Jobs(Protocol):
    """What the scheduler runs: bot/services/catalog.py's Services."""

    liveness: Leased

    def sweep(self) -> None: ...
    def heartbeat(self) -> None: ...


def new_scheduler() -> BackgroundScheduler:
    """The process's one scheduler, started (its thread and its job pool); bot/entrypoints/runtime.py's stop shuts it down."""
    scheduler = BackgroundScheduler(daemon=True, timezone=timezone.utc,
                                    job_defaults={"coalesce": True, "max_instances": 1})
    logging.getLogger("apscheduler").setLevel(logging.WARNING)  # it logs every run at INFO
    scheduler.start()
    return scheduler


def start_scheduler(services: Jobs, interval_seconds: float,
                    scheduler: BackgroundScheduler | None = None) -> BackgroundScheduler:
    """The sweep every `interval_seconds`, and the heartbeat that keeps this process's claims alive
    every third of the lease (its own job, so a long sweep never delays it), on `scheduler` (a new one if None)."""
    scheduler = new_scheduler() if scheduler is None else scheduler
    beat = services.liveness.ttl / 3
    # never skipped, however late (APScheduler drops a run later than misfire_grace_time): under CPU load the
    # beats of a busy process came >1 s late and were dropped, its claims lapsed while it worked, and another
    # replica took the work over — a second summary request for one expiring fork (issue 32)
    scheduler.add_job(services.heartbeat, "interval", seconds=beat, id="threadfork-heartbeat",
                      misfire_grace_time=None)
    scheduler.add_job(services.sweep, "interval", seconds=interval_seconds, id=SWEEP_JOB,
                      misfire_grace_time=max(1, int(interval_seconds)))
    log.info("sweep scheduled every %ss, heartbeat every %ss", interval_seconds, round(beat, 1))
    return scheduler


class Delays:
    """The use cases' Later port on the process's scheduler: a delayed call needs no thread of its own."""

    def __init__(self, scheduler: BaseScheduler):
        self.scheduler = scheduler

    def after(self, seconds: float, call: Callable[[], None]) -> Callable[[], None]:
        lock, cancelled = threading.Lock(), threading.Event()

        def run() -> None:
            with lock:  # a cancel that comes meanwhile waits until the call has finished
                if not cancelled.is_set():
                    call()

        job = self.scheduler.add_job(run, "date", misfire_grace_time=None,
                                     run_date=datetime.now(timezone.utc) + timedelta(seconds=seconds))

        def cancel() -> None:
            with lock:
                cancelled.set()
            try:
                job.remove()
            except JobLookupError:  # it ran, or the scheduler has stopped
                pass
        return cancel
