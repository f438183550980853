"""HTTP mode with several processes: one listening socket, N forked workers, a supervisor.

One Python process runs one thread at a time; under a burst of replies the bot is CPU-bound in that
one interpreter (bench figure 4). Each worker is a whole bot (its own database connections, Slack
and Anthropic clients and sweep) built after the fork, so no thread or connection crosses it; the
kernel hands each incoming connection to one worker. Workers coordinate exactly like replicas do:
through the database (SQLite writers queue across processes on a lock file).
"""
from __future__ import annotations

import logging
import os
import signal
import socket
import time
from collections.abc import Callable

log = logging.getLogger(__name__)

RESTART_PAUSE = 1.0  # seconds before replacing a worker that died, so a crash loop cannot spin
STARTUP_FAILED = 3  # a worker's exit code when it could not start (bad token…): all would fail alike


def serve_forked(host: str, port: int, count: int, serve: Callable[[socket.socket], int]) -> int:
    """Bind once, run `serve(sock)` in `count` forked workers, replace any that dies, and stop them
    all on SIGTERM or SIGINT. Call before any thread exists in this process."""
    listener = socket.create_server((host, port), backlog=1024)
    workers: dict[int, int] = {}  # pid → slot
    stopping = False
    result = 0

    def start(slot: int) -> None:
        pid = os.fork()
        if pid == 0:
            signal.signal(signal.SIGTERM, signal.SIG_DFL)
            signal.signal(signal.SIGINT, signal.SIG_DFL)
            code = 1
            try:
                code = serve(listener)
            except BaseException:  # noqa: BLE001 - the supervisor logs the exit; keep the traceback
                logging.getLogger(__name__).exception("worker %s failed", slot)
            finally:
                os._exit(code)
        workers[pid] = slot

    def stop(signum, _frame) -> None:
        nonlocal stopping
        stopping = True
        for pid in list(workers):
            _signal(pid, signal.SIGTERM)

    signal.signal(signal.SIGTERM, stop)
    signal.signal(signal.SIGINT, stop)
    for slot in range(count):
        start(slot)
    log.info("%s workers serving on %s:%s", count, host, listener.getsockname()[1])
    while workers:
        try:
            pid, status = os.wait()
        except ChildProcessError:
            break
        slot = workers.pop(pid, None)
        code = os.waitstatus_to_exitcode(status)
        if slot is None or stopping:
            continue
        if code == STARTUP_FAILED:
            stop(None, None)
            result = STARTUP_FAILED
            continue
        log.error("worker %s (pid %s) exited with %s; starting another", slot, pid, code)
        time.sleep(RESTART_PAUSE)
        if not stopping:
            start(slot)
    listener.close()
    return result


def _signal(pid: int, signum: int) -> None:
    try:
        os.kill(pid, signum)
    except ProcessLookupError:
        pass

