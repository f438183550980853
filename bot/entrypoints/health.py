"""/healthz and /metrics: HTTP mode serves them on PORT beside Slack's path (bot/entrypoints/wsgi.py); Socket Mode, which
has no HTTP server of its own, on THREADFORK_HEALTH_PORT through this small one (the standard library's
WSGI server, a thread per request, in a daemon thread: it dies with the process).

/healthz answers 200 when this process can write the store, else 503; /metrics is
bot/infrastructure/metrics.py's exposition. Nothing else is served, and nothing here logs a request.
"""
from __future__ import annotations

import json
import logging
import socketserver
import threading
from http import HTTPStatus
from wsgiref.simple_server import WSGIRequestHandler, WSGIServer, make_server

from ..store.backlog import backlog
from ..infrastructure import metrics

log = logging.getLogger(__name__)


def healthz(services, start_response):
    try:
        services.healthy()
    except Exception as error:  # noqa: BLE001 - any failure to write means unhealthy
        log.warning("health check: the store cannot be written (%s)", type(error).__name__)
        return reply(start_response, HTTPStatus.SERVICE_UNAVAILABLE, json.dumps({"ok": False, "store": "not writable"}),
                     "application/json")
    return reply(start_response, HTTPStatus.OK, json.dumps({"ok": True, "store": "writable"}), "application/json")


def metrics_page(db, start_response):
    return reply(start_response, HTTPStatus.OK, metrics.exposition(lambda: backlog(db)), metrics.CONTENT_TYPE)


def reply(start_response, status: HTTPStatus, body: str | bytes, content_type: str):
    data = body.encode("utf-8") if isinstance(body, str) else body
    start_response(f"{status.value} {status.phrase}",
                   [("Content-Type", content_type), ("Content-Length", str(len(data)))])
    return [data]


class HealthApp:
    """The health port's WSGI application."""

    def __init__(self, wiring):
        self.services, self.db = wiring.services, wiring.db

    def __call__(self, environ, start_response):
        path, method = environ.get("PATH_INFO", ""), environ.get("REQUEST_METHOD", "")
        if method in ("GET", "HEAD") and path == "/healthz":
            return healthz(self.services, start_response)
        if method in ("GET", "HEAD") and path == "/metrics":
            return metrics_page(self.db, start_response)
        return reply(start_response, HTTPStatus.NOT_FOUND, "Not Found", "text/plain")


class _Server(socketserver.ThreadingMixIn, WSGIServer):
    daemon_threads = True


class _Quiet(WSGIRequestHandler):
    def log_message(self, *args) -> None:  # no access log, as in HTTP mode
        pass


def serve_health(wiring, host: str, port: int) -> WSGIServer:
    """Serve /healthz and /metrics on host:port from a daemon thread; returns the server."""
    server = make_server(host, port, HealthApp(wiring), server_class=_Server, handler_class=_Quiet)
    threading.Thread(target=server.serve_forever, name="threadfork-health", daemon=True).start()
    log.info("health and metrics on port %s", server.server_port)
    return server
