"""`python -m bench.traced`: `python -m bot`, unchanged, with a profiler in its process (bench/trace.py runs it).

Every call of a function under bot/ is recorded — its file and name, when (time.monotonic, which every process of
the machine shares) and the outermost bot/ function of the thread's call stack then (its root: what
the thread was doing for the bot) — and written by a thread of the wrapper's own to THREADFORK_TRACE_TO, a
folder, one file per process (gunicorn's worker is forked: it gets a file of its own). The bot holds no
trace code; nothing here changes what it does, only how fast.
"""
from __future__ import annotations

import os
import runpy
import sys
import threading
import time
from collections import deque
from importlib.util import find_spec

BOT = os.path.dirname(find_spec("bot").origin) + os.sep
FOLDER = os.environ.pop("THREADFORK_TRACE_TO")

_events: deque[tuple[str, str, float, str]] = deque()
_stack = threading.local()


def _profile(frame, event: str, arg) -> None:
    if event != "call" and event != "return":
        return
    path = frame.f_code.co_filename
    if not path.startswith(BOT):
        return
    depth = getattr(_stack, "depth", 0)
    if event == "return":
        _stack.depth = max(depth - 1, 0)
        return
    if depth == 0:
        _stack.root = f"{path[len(BOT):]}:{frame.f_code.co_name}"
    _stack.depth = depth + 1
    _events.append((path[len(BOT):], frame.f_code.co_name, time.monotonic(), _stack.root))


def _write_forever() -> None:
    with open(os.path.join(FOLDER, f"trace-{os.getpid()}.tsv"), "a", buffering=1) as out:
        while True:
            time.sleep(0.05)
            while _events:
                path, name, at, root = _events.popleft()
                out.write(f"{path}\t{name}\t{at:.6f}\t{root}\n")


def _start_writer() -> None:
    _events.clear()  # a forked child's copy of its parent's: not its own
    threading.Thread(target=_write_forever, name="trace-writer", daemon=True).start()


if __name__ == "__main__":
    os.register_at_fork(after_in_child=_start_writer)
    _start_writer()
    threading.setprofile(_profile)
    sys.setprofile(_profile)
    sys.argv[0] = "bot"
    runpy.run_module("bot", run_name="__main__", alter_sys=True)
