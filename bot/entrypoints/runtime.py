"""A bot process's life: start (the wiring and its sweep) and stop.

`start` runs in the process that serves — a gunicorn worker after the fork, or the Socket Mode
process — never in one that forks afterwards: the wiring holds database connections and threads.
"""
from __future__ import annotations

import gc
import logging
import os
import sys
import time
from dataclasses import dataclass

from apscheduler.schedulers.background import BackgroundScheduler

from ..app import StartupError, Wiring, build
from ..config import Settings
from ..infrastructure.scheduler import SWEEP_JOB, start_scheduler

log = logging.getLogger(__name__)

STARTUP_FAILED = 3  # the exit code; gunicorn's master also stops with it when a worker cannot boot


@dataclass
class Running:
    wiring: Wiring
    scheduler: BackgroundScheduler


def start(settings: Settings) -> Running:
    """Build the bot and start its sweep; when it cannot start, say why (never a secret) and exit 3."""
    try:
        wiring = build(settings)
    except StartupError as error:
        print(f"Threadfork cannot start: {error}", file=sys.stderr, flush=True)
        raise SystemExit(STARTUP_FAILED) from None
    scheduler = start_scheduler(wiring.services, settings.threadfork_sweep_interval, wiring.scheduler)
    # the listener pool's threads all started now: the first burst after a start (a deploy) then finds them
    # running, as every later one does (bench, figure 3: that burst's ack p99 ~300 → ~130 ms)
    wiring.executor.start_threads()
    # start-up leaves ~200K long-lived objects (libraries, models, schemas); a full collection
    # over them took ~140 ms, a pause in whichever turn it hit. Frozen, they are never scanned again.
    gc.collect()
    gc.freeze()
    return Running(wiring, scheduler)


def stop(running: Running) -> None:
    """The process is leaving (SIGTERM: gunicorn has stopped taking requests, or Socket Mode has
    closed its connection). No sweep starts any more and no new listener; replies in flight finish
    within THREADFORK_DRAIN_TIMEOUT while the heartbeat keeps their claims alive; then whatever is still
    held is handed back, so another replica resumes it at once, and the process exits 0 without
    waiting for the threads it gave up on. Every pool and timer the wiring made stops here, the Slack calls
    the replies left behind (a 👀 to remove, a session status) within what is left of the drain timeout."""
    wiring = running.wiring
    deadline = time.monotonic() + wiring.settings.threadfork_drain_timeout
    running.scheduler.remove_job(SWEEP_JOB)
    unfinished = wiring.executor.drain(wiring.settings.threadfork_drain_timeout)
    wiring.services.liveness.release_all()
    running.scheduler.shutdown(wait=False)
    wiring.services.stopping.close()  # no answer left to watch
    for calls in (wiring.watcher, *wiring.side_calls):
        calls.settle(deadline - time.monotonic())
    log.info("drained: %s", f"{unfinished} replies handed back" if unfinished else "every reply finished")
    logging.shutdown()
    os._exit(0)
