"""The 👀 reaction that says Claude is thinking, on the message being answered.

It appears only if no text is visible after THINKING_DELAY (a fast answer never flickers it, and
costs no reactions.* calls), and goes as soon as the first words are visible. Slack calls run on a
small pool (Reactions), never on the reply's thread; a removal is chained after its add, never before it.
The same scheduler and pool time a reply's other delayed call (`later`): a top-level answer's "Thinking…"
message, posted once Claude has thought for a while with nothing written (channel_reply.py). Unlike the use
cases' Later port, its cancel never waits for a call under way: the reply cancels while holding the lock the
call takes.
"""
from __future__ import annotations

import logging
import threading
from collections.abc import Callable
from concurrent.futures import Executor, Future
from datetime import datetime, timedelta, timezone

from apscheduler.jobstores.base import JobLookupError
from apscheduler.schedulers.base import BaseScheduler
from slack_sdk.errors import SlackApiError
from slack_sdk.web import WebClient

log = logging.getLogger(__name__)

THINKING = "eyes"
THINKING_DELAY = 0.5  # seconds without visible text before the reaction appears


class Reactions:
    """What every reply's 👀 runs on, made and stopped by the composition root (bot/app.py, bot/entrypoints/runtime.py):
    the process's scheduler times the delay (hundreds of replies, no thread apiece), `calls` sends them."""

    def __init__(self, timer: BaseScheduler, calls: Executor, delay: float = THINKING_DELAY):
        self.timer = timer
        self.calls = calls
        self.delay = delay

    def thinking(self, client: WebClient, channel_id: str, ts: str | None) -> Thinking:
        """The 👀 of one reply, on the message `ts` (None: no reaction)."""
        return Thinking(client, channel_id, ts, self)

    def later(self, delay: float, call: Callable[[], None]) -> DelayedCall:
        """`call` on the pool once `delay` seconds have passed (the scheduler only times it), unless cancelled."""
        return DelayedCall(self, delay, call)


class DelayedCall:
    def __init__(self, reactions: Reactions, delay: float, call: Callable[[], None]):
        self._calls = reactions.calls
        self._call = call
        self._cancelled = False
        self._due = reactions.timer.add_job(self._submit, "date", misfire_grace_time=None,
                                            run_date=datetime.now(timezone.utc) + timedelta(seconds=delay))

    def cancel(self) -> None:
        """No call from now on, if it is not under way already (the call checks what it still has to do)."""
        if self._cancelled:
            return
        self._cancelled = True
        try:
            self._due.remove()
        except JobLookupError:  # it ran, or the scheduler has stopped
            pass

    def _submit(self) -> None:
        try:
            self._calls.submit(self._call)
        except RuntimeError:  # the pool is closed: the process is leaving
            log.info("a delayed reply call was dropped: the process is stopping")


class Thinking:
    def __init__(self, client: WebClient, channel_id: str, ts: str | None, reactions: Reactions):
        self.client = client
        self.channel_id = channel_id
        self.ts = ts
        self.calls = reactions.calls
        self._lock = threading.Lock()
        self._over = False
        self._added: Future | None = None
        self._due = None  # the scheduled add, until it runs or the reply no longer needs it
        if ts:
            self._due = reactions.timer.add_job(self._add, "date", misfire_grace_time=None,
                                                run_date=datetime.now(timezone.utc) + timedelta(seconds=reactions.delay))

    def stop(self) -> None:
        """Text is visible (or the reply ended): no reaction from now on; remove one already added."""
        with self._lock:
            if self._over:
                return
            self._over = True
            added, due, self._due = self._added, self._due, None
        if added is not None:
            added.add_done_callback(lambda done: done.result() and self.calls.submit(self._call, "reactions_remove"))
        elif due is not None:  # a fast answer: its add need not wake the scheduler at all
            try:
                due.remove()
            except JobLookupError:  # running now (it will see the reply over) or the scheduler has stopped
                pass

    def _add(self) -> None:
        with self._lock:
            if not self._over:
                self._added = self.calls.submit(self._call, "reactions_add")

    def _call(self, method: str) -> bool:
        try:
            getattr(self.client, method)(channel=self.channel_id, timestamp=self.ts, name=THINKING)
            return True
        except SlackApiError as error:
            log.info("%s %s failed: %s", method, THINKING, error.response.get("error"))
            return False
        except Exception:  # noqa: BLE001 - a reaction is never worth failing a reply for
            log.exception("%s %s failed", method, THINKING)
            return False
