"""HTTP mode's one WSGI application: gunicorn serves it in production, the tests serve the same
class in-process.

POST /slack/events goes to Bolt's WSGI adapter, which verifies Slack's signature: anything unsigned,
forged or stale gets Bolt's 401. Before Bolt, a body over MAX_BODY gets 413 unread, and a validly
signed but malformed body gets 400 (Bolt would raise and the server answer 500), so garbage never
reaches a listener. GET /healthz says whether the store answers. Every other path is 404.
Nothing here logs a request's body or headers.
"""
from __future__ import annotations

import io
import json
import logging
from http import HTTPStatus
from urllib.parse import parse_qs

from slack_bolt.adapter.wsgi import SlackRequestHandler
from slack_sdk.signature import SignatureVerifier

from .app import Wiring

log = logging.getLogger(__name__)

SLACK_PATH = "/slack/events"
MAX_BODY = 1_000_000  # Slack's payloads are far smaller


class HttpApp:
    def __init__(self, wiring: Wiring):
        self.store = wiring.store
        self.bolt = SlackRequestHandler(wiring.app, path=SLACK_PATH)
        self.verifier = SignatureVerifier(wiring.settings.slack_signing_secret.get_secret_value())

    def __call__(self, environ, start_response):
        path, method = environ.get("PATH_INFO", ""), environ.get("REQUEST_METHOD", "")
        if path == SLACK_PATH and method == "POST":
            return self._slack(environ, start_response)
        if path == "/healthz" and method in ("GET", "HEAD"):
            return self._health(start_response)
        return _reply(start_response, HTTPStatus.NOT_FOUND, "Not Found", "text/plain")

    def _slack(self, environ, start_response):
        try:
            length = int(environ.get("CONTENT_LENGTH") or 0)
        except ValueError:
            length = 0
        if length > MAX_BODY:
            return _reply(start_response, HTTPStatus.REQUEST_ENTITY_TOO_LARGE, "payload too large", "text/plain")
        raw = environ["wsgi.input"].read(length) if length > 0 else b""
        try:
            body = raw.decode("utf-8")
        except UnicodeDecodeError:  # Bolt decodes strictly and would raise; no signature can match this
            body = raw.decode("utf-8", errors="replace")
            raw = body.encode("utf-8")
        # well-formedness first: the signature is checked here only for a body Bolt would choke on
        if not _well_formed(body, environ.get("CONTENT_TYPE", "")) and self.verifier.is_valid(
                body, environ.get("HTTP_X_SLACK_REQUEST_TIMESTAMP", ""), environ.get("HTTP_X_SLACK_SIGNATURE", "")):
            log.warning("a signed request with a malformed body was refused")
            return _reply(start_response, HTTPStatus.BAD_REQUEST, "malformed payload", "text/plain")
        return self.bolt({**environ, "wsgi.input": io.BytesIO(raw), "CONTENT_LENGTH": str(len(raw))}, start_response)

    def _health(self, start_response):
        try:
            self.store.ping()
        except Exception as error:
            log.warning("health check: store unreachable (%s)", type(error).__name__)
            return _reply(start_response, HTTPStatus.SERVICE_UNAVAILABLE,
                          json.dumps({"ok": False, "store": "unreachable"}), "application/json")
        return _reply(start_response, HTTPStatus.OK, json.dumps({"ok": True, "store": "reachable"}), "application/json")


def _well_formed(body: str, content_type: str) -> bool:
    """The shapes Bolt expects: a JSON event envelope, a slash command form, or a `payload=` form."""
    try:
        if "json" in content_type:
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
    except ValueError:
        return False


def _reply(start_response, status: HTTPStatus, body: str, content_type: str):
    data = body.encode("utf-8")
    start_response(f"{status.value} {status.phrase}",
                   [("Content-Type", content_type), ("Content-Length", str(len(data)))])
    return [data]
