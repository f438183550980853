"""The 👀 reaction that says Claude is thinking, on the message being answered.

It appears only if no text is visible after THINKING_DELAY (a fast answer never flickers it, and
costs no reactions.* calls), and goes as soon as the first words are visible. Slack calls run on a
small pool, never on the reply's thread; a removal is chained after its add, never before it.
"""
from __future__ import annotations

import heapq
import itertools
import logging
import threading
import time
from collections.abc import Callable
from concurrent.futures import Future, ThreadPoolExecutor

from slack_sdk.errors import SlackApiError
from slack_sdk.web import WebClient

log = logging.getLogger(__name__)

THINKING = "eyes"
THINKING_DELAY = 0.5  # seconds without visible text before the reaction appears
CALLS = ThreadPoolExecutor(max_workers=8, thread_name_prefix="thinking")


class _Later:
    """Runs callables after a delay on one shared thread (hundreds of replies, one thread)."""

    def __init__(self):
        self._due: list[tuple[float, int, Callable[[], None]]] = []
        self._order = itertools.count()
        self._wake = threading.Condition()
        self._thread: threading.Thread | None = None

    def call_in(self, delay: float, fn: Callable[[], None]) -> None:
        with self._wake:
            entry = (time.monotonic() + delay, next(self._order), fn)
            heapq.heappush(self._due, entry)
            if self._thread is None:
                self._thread = threading.Thread(target=self._run, name="thinking-timer", daemon=True)
                self._thread.start()
            if self._due[0] is entry:  # due before what the thread waits for: wake it (not for every reply)
                self._wake.notify()

    def _run(self) -> None:
        while True:
            with self._wake:
                while not self._due or self._due[0][0] > time.monotonic():
                    self._wake.wait(self._due[0][0] - time.monotonic() if self._due else None)
                _, _, fn = heapq.heappop(self._due)
            try:
                fn()
            except Exception:  # noqa: BLE001 - the one timer thread must outlive any callback
                log.exception("a delayed call failed")


LATER = _Later()


class Thinking:
    def __init__(self, client: WebClient, channel_id: str, ts: str | None, delay: float = THINKING_DELAY):
        self.client = client
        self.channel_id = channel_id
        self.ts = ts
        self._lock = threading.Lock()
        self._over = False
        self._added: Future | None = None
        if ts:
            LATER.call_in(delay, self._add)

    def stop(self) -> None:
        """Text is visible (or the reply ended): no reaction from now on; remove one already added."""
        with self._lock:
            if self._over:
                return
            self._over = True
            added = self._added
        if added is not None:
            added.add_done_callback(lambda done: done.result() and CALLS.submit(self._call, "reactions_remove"))

    def _add(self) -> None:
        with self._lock:
            if not self._over:
                self._added = CALLS.submit(self._call, "reactions_add")

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
