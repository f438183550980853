"""HTTP mode: POST /slack/events (events, commands, interactivity) into Bolt, GET /healthz.

Bolt verifies signatures; before it, a validly signed but malformed body is answered 400 here
(Bolt would raise and the server would say 500), so garbage never reaches a listener.
"""
from __future__ import annotations

import json
import logging
from urllib.parse import parse_qs

from slack_bolt.request import BoltRequest
from slack_sdk.signature import SignatureVerifier

from .app import Wiring

log = logging.getLogger(__name__)

MAX_BODY = 1_000_000  # Slack's payloads are far smaller


class HttpApp:
    def __init__(self, wiring: Wiring):
        self.wiring = wiring
        secret = wiring.settings.slack_signing_secret
        self.verifier = SignatureVerifier(secret.get_secret_value()) if secret else None

    def __call__(self, environ, start_response):
        path, method = environ.get("PATH_INFO", ""), environ.get("REQUEST_METHOD", "")
        if path == "/healthz" and method in ("GET", "HEAD"):
            return self._health(start_response)
        if path == "/slack/events" and method == "POST":
            return self._slack(environ, start_response)
        return _reply(start_response, 404, "Not Found", "text/plain")

    def _slack(self, environ, start_response):
        try:
            length = int(environ.get("CONTENT_LENGTH") or 0)
        except ValueError:
            length = 0
        if length > MAX_BODY:
            return _reply(start_response, 413, "payload too large", "text/plain")
        body = environ["wsgi.input"].read(length).decode("utf-8", errors="replace") if length else ""
        headers = {key[5:].replace("_", "-").lower(): value for key, value in environ.items()
                   if key.startswith("HTTP_")}
        headers["content-type"] = environ.get("CONTENT_TYPE", "")
        if self.verifier and self.verifier.is_valid_request(body, headers) and not _well_formed(body, headers):
            log.warning("a signed request with a malformed body was refused")
            return _reply(start_response, 400, "malformed payload", "text/plain")
        response = self.wiring.app.dispatch(
            BoltRequest(body=body, query=environ.get("QUERY_STRING", ""), headers=headers))
        content_type = (response.headers.get("content-type") or ["text/plain"])[0]
        return _reply(start_response, response.status, response.body, content_type)

    def _health(self, start_response):
        try:
            self.wiring.services.healthy()
            return _reply(start_response, 200, json.dumps({"ok": True, "store": "writable"}), "application/json")
        except Exception as error:
            log.warning("health check: the store cannot be written (%s)", type(error).__name__)
            return _reply(start_response, 503, json.dumps({"ok": False, "store": "not writable"}),
                          "application/json")


def _well_formed(body: str, headers: dict) -> bool:
    """The shapes Bolt expects: a JSON event envelope, a slash command form, or a `payload=` form."""
    try:
        if "json" in headers.get("content-type", ""):
            envelope = json.loads(body)
            if not isinstance(envelope, dict) or not isinstance(envelope.get("type"), str):
                return False
            if envelope["type"] == "event_callback":
                return isinstance(envelope.get("event"), dict) and isinstance(envelope["event"].get("type"), str)
            return True
        form = parse_qs(body)
        if "payload" in form:
            payload = json.loads(form["payload"][0])
            return isinstance(payload, dict) and isinstance(payload.get("type"), str)
        return "command" in form or "ssl_check" in form
    except (ValueError, UnicodeDecodeError):
        return False


def _reply(start_response, status: int, body: str, content_type: str):
    reason = {200: "OK", 400: "Bad Request", 401: "Unauthorized", 404: "Not Found", 413: "Payload Too Large",
              503: "Service Unavailable"}.get(status, "Status")
    data = body.encode("utf-8") if isinstance(body, str) else body
    start_response(f"{status} {reason}", [("Content-Type", content_type), ("Content-Length", str(len(data)))])
    return [data]


def make_server(wiring: Wiring, host: str, port: int, listener=None):
    """waitress on host:port, or on an already bound `listener` (shared by worker processes)."""
    from waitress import create_server

    where = {"sockets": [listener]} if listener is not None else {"host": host, "port": port}
    return create_server(HttpApp(wiring), threads=16, ident="threadfork", **where)
