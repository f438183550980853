"""HTTP mode: Bolt's WSGI adapter at POST /slack/events and GET /healthz, served by waitress."""
from __future__ import annotations

import json
import logging

from slack_bolt.adapter.wsgi import SlackRequestHandler

from .app import Wiring

log = logging.getLogger(__name__)


class HttpApp:
    def __init__(self, wiring: Wiring):
        self.wiring = wiring
        self.slack = SlackRequestHandler(wiring.app, path="/slack/events")

    def __call__(self, environ, start_response):
        path, method = environ.get("PATH_INFO", ""), environ.get("REQUEST_METHOD", "")
        if path == "/healthz" and method in ("GET", "HEAD"):
            return self._health(start_response)
        if path == "/slack/events":
            return self.slack(environ, start_response)
        start_response("404 Not Found", [("Content-Type", "text/plain")])
        return [b"Not Found"]

    def _health(self, start_response):
        try:
            self.wiring.store.ping()
            status, body = "200 OK", {"ok": True, "store": "reachable"}
        except Exception as error:
            log.warning("health check: store unreachable (%s)", type(error).__name__)
            status, body = "503 Service Unavailable", {"ok": False, "store": "unreachable"}
        start_response(status, [("Content-Type", "application/json")])
        return [json.dumps(body).encode()]


def make_server(wiring: Wiring, host: str, port: int):
    from waitress import create_server

    return create_server(HttpApp(wiring), host=host, port=port, threads=16, ident="threadfork")
