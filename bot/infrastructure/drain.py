"""The listener pool, drainable: on SIGTERM no new listener starts (queued ones are cancelled — their
deliveries stay in the durable inbox for another replica), and the ones running may finish within
a deadline. A listener runs in the context its submitter had (contextvars: the ids log lines are about)."""
from __future__ import annotations

import contextvars
import threading
import time
from concurrent.futures import Future, ThreadPoolExecutor, wait


class DrainableExecutor(ThreadPoolExecutor):
    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        self._running: set[Future] = set()
        self._lock = threading.Lock()

    def start_threads(self) -> None:
        """Every thread started now. A pool starts a thread when a task finds none idle, and Thread.start waits
        until the new thread runs: under a burst of deliveries each acknowledgement waited for that, behind every
        thread that held the interpreter lock meanwhile."""
        started = threading.Event()
        for _ in range(self._max_workers):
            super().submit(started.wait)
        started.set()

    def submit(self, fn, /, *args, **kwargs) -> Future:
        future = super().submit(contextvars.copy_context().run, fn, *args, **kwargs)
        with self._lock:
            self._running.add(future)
        future.add_done_callback(self._forget)
        return future

    def drain(self, timeout: float) -> int:
        """Take no more work, cancel what has not started, wait up to `timeout` seconds for the rest;
        returns how many are still running."""
        self.shutdown(wait=False, cancel_futures=True)
        with self._lock:
            running = list(self._running)
        _, unfinished = wait(running, timeout=timeout)
        return len(unfinished)

    def settle(self, timeout: float) -> int:
        """For best-effort calls (a 👀 to remove, a session to close): let what is queued run too, and what it
        chains, up to `timeout` seconds; then take no more. Returns how many were left."""
        deadline = time.monotonic() + timeout
        while (left := deadline - time.monotonic()) > 0:
            with self._lock:
                running = list(self._running)
            if not running:
                break
            wait(running, timeout=left)
        self.shutdown(wait=False, cancel_futures=True)
        return self.in_flight()

    def in_flight(self) -> int:
        """How many listeners are queued or running (a delivery is handed over before its ack)."""
        with self._lock:
            return len(self._running)

    def _forget(self, future: Future) -> None:
        with self._lock:
            self._running.discard(future)
