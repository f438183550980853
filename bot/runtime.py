"""A bot process's life: start (the wiring and its sweep) and stop.

`start` runs in the process that serves — a gunicorn worker after the fork, or the Socket Mode
process — never in one that forks afterwards: the wiring holds database connections and threads.
"""
from __future__ import annotations

import gc
import sys
from dataclasses import dataclass

from apscheduler.schedulers.background import BackgroundScheduler

from .app import StartupError, Wiring, build
from .config import Settings
from .scheduler import start_scheduler

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
    scheduler = start_scheduler(wiring.services, settings.threadfork_sweep_interval)
    # start-up leaves ~200K long-lived objects (libraries, models, schemas); a full collection
    # over them took ~140 ms, a pause in whichever turn it hit. Frozen, they are never scanned again.
    gc.collect()
    gc.freeze()
    return Running(wiring, scheduler)


def stop(running: Running) -> None:
    """The process is leaving (gunicorn has stopped taking requests): no sweep starts any more.

    Replies in flight go on on the listener threads, which the interpreter waits for at exit, until
    the master's graceful timeout ends the worker; a reply cut off there is redone by a sweep once
    its lease expires. A graceful drain (finish or hand back the leases within a deadline) goes here.
    """
    running.scheduler.shutdown(wait=False)
