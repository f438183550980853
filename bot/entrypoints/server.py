"""HTTP mode on gunicorn, started by `python -m bot` itself: no gunicorn command line or config file.

The master binds HOST:PORT and keeps THREADFORK_PROCESSES workers serving it. It replaces a worker
that dies, stops every worker on SIGTERM and exits 0, and when a worker cannot start (bad token,
unusable database: the others would fail alike) it stops them all and exits 3.

Workers are gthread: the app is synchronous and its model calls block, but they run on Bolt's
listener pool, so a request thread only verifies, acknowledges and hands over.

The master builds nothing and imports none of the app. Each worker builds its own wiring — database
engine, Slack and Anthropic clients, listener threads, sweep — in `load`, after the fork, so no
thread or connection crosses it; workers coordinate through the database exactly as replicas do.
Migrations run there too, not once in the master: `build` migrates in every process anyway
(replicas take turns behind a lock and find the schema current after the first), so a master
migration would add work, open a connection before the fork, and split the one start-up path that
1 process, N processes and replicas share.

Metrics: before the fork the master points PROMETHEUS_MULTIPROC_DIR at an emptied folder (its own under
the system's temporary folder unless the operator names one), so every worker's counts land there and
/metrics, whichever worker answers, reports them summed (bot/infrastructure/metrics.py).
"""
from __future__ import annotations

import atexit
import math
import os
import shutil
import signal
import tempfile

from gunicorn.app.base import BaseApplication
from gunicorn.errors import HaltServer
from gunicorn.glogging import Logger

from ..config import LOG_FORMAT, Settings
from ..infrastructure.logs import formatter

# Request threads only verify, acknowledge and hand over to Bolt's listener pool (THREADFORK_WORKERS).
REQUEST_THREADS = 16
# The master kills a worker whose main loop has not beaten for this long. The loop beats every
# second whatever the replies do (they run on other threads), so this bounds a hung loop — and a
# worker's start-up: migrations behind another replica's lock, auth.test with its retries.
HEARTBEAT_TIMEOUT = 60
# After SIGTERM the worker drains for THREADFORK_DRAIN_TIMEOUT; the master kills it only this much later.
DRAIN_MARGIN = 5


class _Log(Logger):
    """Gunicorn's own lines in the bot's format at LOG_LEVEL. Its access log stays off (the
    default), so no request line, let alone a body, reaches the log."""
    error_fmt = LOG_FORMAT
    datefmt = None


class _JsonLog(_Log):
    """LOG_FORMAT=json: gunicorn's lines as JSON objects too."""

    def setup(self, cfg) -> None:
        super().setup(cfg)
        for handler in self.error_log.handlers:
            handler.setFormatter(formatter("json"))


class GunicornApp(BaseApplication):
    """Gunicorn configured from `options` alone; the WSGI application built by `load(self)` in each
    worker, after the fork (gunicorn's `preload_app` stays off) and after gunicorn has set the
    worker's signal handlers."""

    def __init__(self, options: dict, load):
        self.options = options
        self._load = load
        self.running = None  # a worker's bot (bot.entrypoints.runtime.Running); the master never has one
        super().__init__()

    def load_config(self) -> None:
        for name, value in self.options.items():
            self.cfg.set(name, value)

    def load(self):
        _stop_gracefully_on_interrupt()
        return self._load(self)


def options(host: str, port: int, processes: int, log_level: str, graceful: int, log_format: str = "text") -> dict:
    """How HTTP mode is served: gthread workers sharing host:port, the bot's log format, no access
    log, no control socket (nor its thread in the master)."""
    host = f"[{host}]" if ":" in host else host
    return {"bind": [f"{host}:{port}"], "workers": processes, "worker_class": "gthread",
            "threads": REQUEST_THREADS, "timeout": HEARTBEAT_TIMEOUT, "graceful_timeout": graceful,
            "loglevel": log_level.lower(), "logger_class": _JsonLog if log_format == "json" else _Log,
            "control_socket_disable": True}


def _threadfork(app: GunicornApp):
    from .runtime import start  # imported here: the master stays small (~37 MB)
    from .wsgi import HttpApp

    app.running = start(app.settings)  # exits 3, which stops the master too, when it cannot
    return HttpApp(app.running.wiring)


def _stop_gracefully_on_interrupt() -> None:
    """Ctrl-C (SIGINT to the whole process group) and the master's quick stop (SIGQUIT) end a worker
    as SIGTERM does: they take the SIGTERM handler gunicorn has just installed (a worker loads its
    app right after setting its handlers). gthread's own handler for them calls sys.exit inside the
    signal handler: landing mid-boot it broke a lock in threading and the worker exited 3, halting the
    master; landing while the pool started a request's thread, or twice at once, it deadlocked."""
    graceful = signal.getsignal(signal.SIGTERM)
    signal.signal(signal.SIGINT, graceful)
    signal.signal(signal.SIGQUIT, graceful)


def _child_exit(arbiter, worker) -> None:
    """In the master, once a worker has gone: its live values leave the metrics' sums."""
    from prometheus_client import multiprocess

    multiprocess.mark_process_dead(worker.pid)


def _worker_exit(arbiter, worker) -> None:
    """A worker is leaving (SIGTERM, Ctrl-C, its master gone): the one seam for a graceful drain."""
    if worker.app.running is not None:
        from .runtime import stop

        stop(worker.app.running)


def serve(settings: Settings) -> None:
    """Run the master until SIGTERM; it exits the process with its status (never returns)."""
    graceful = math.ceil(settings.threadfork_drain_timeout) + DRAIN_MARGIN
    _metrics_folder()
    app = GunicornApp({**options(settings.host, settings.port, settings.threadfork_processes, settings.log_level,
                                 graceful, settings.log_format), "worker_exit": _worker_exit,
                       "child_exit": _child_exit}, _threadfork)
    app.settings = settings
    _run(app)


def _metrics_folder() -> None:
    """Emptied before any worker starts (a restart counts from zero). Set before prometheus-client is first
    imported, which is in the workers: the library picks its multiprocess mode at import."""
    folder = os.environ.get("PROMETHEUS_MULTIPROC_DIR")
    if not folder:  # ours: gone with the master (a worker inherits the handler: it must leave the folder be)
        folder, master = tempfile.mkdtemp(prefix="threadfork-metrics-"), os.getpid()
        atexit.register(lambda: os.getpid() == master and shutil.rmtree(folder, ignore_errors=True))
    os.makedirs(folder, exist_ok=True)
    for name in os.listdir(folder):
        if name.endswith(".db"):
            os.remove(os.path.join(folder, name))
    os.environ["PROMETHEUS_MULTIPROC_DIR"] = folder


def serve_wsgi(make_app, host: str, port: int, log_level: str = "INFO") -> None:
    """Serve another WSGI app exactly as HTTP mode serves Threadfork (the bench's baseline bot)."""
    _run(GunicornApp(options(host, port, 1, log_level, DRAIN_MARGIN), lambda _: make_app()))


def _run(app: GunicornApp) -> None:
    try:
        app.run()
    except HaltServer as halt:
        # two workers failing to boot at once: the second's SIGCHLD lands while the master is already
        # halting for the first, and gunicorn lets that HaltServer escape; its status is the answer
        raise SystemExit(halt.exit_status) from None
