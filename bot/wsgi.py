"""HTTP mode's one WSGI application: gunicorn serves it in production, the tests serve the same
class in-process.

POST /slack/events: Slack's signature is verified here, first, for every request — the body is read
through the HMAC in pieces, so even a huge one costs no memory. Anything unsigned, forged or stale
gets 401 and one short log line that holds nothing the sender wrote (Bolt's own check would log the
whole body). A signed body over MAX_BODY gets 413; a signed but malformed body gets 400 (Bolt would
raise, the server answer 500), so garbage never reaches a listener. Then Bolt's WSGI adapter takes
over, without checking the signature again. GET /healthz says whether the store can be written.
Installing into many workspaces: GET /slack/install and GET /slack/oauth_redirect (or the path of
THREADFORK_INSTALL_REDIRECT_URL) go to Bolt's OAuth flow as they are — a person's browser sends them,
Slack signs nothing there; the flow checks its own state instead. GET /metrics: Prometheus' exposition
(bot/infrastructure/metrics.py). Every other path is 404. Nothing here logs a request's body or headers.
"""
from __future__ import annotations

import hashlib
import hmac
import io
import json
import logging
import time
from http import HTTPStatus
from urllib.parse import parse_qs

from slack_bolt.adapter.wsgi import SlackRequestHandler

from .app import Wiring
from .infrastructure import metrics
from .infrastructure.health import metrics_page

log = logging.getLogger(__name__)

SLACK_PATH = "/slack/events"
MAX_BODY = 1_000_000  # Slack's payloads are far smaller
STALE_AFTER = 300  # seconds: Slack's own replay window
_PIECE = 65536


class HttpApp:
    def __init__(self, wiring: Wiring):
        self.services = wiring.services
        self.db = wiring.db
        self.bolt = SlackRequestHandler(wiring.app, path=SLACK_PATH)
        self.secret = wiring.settings.slack_signing_secret.get_secret_value().encode()
        flow = wiring.app.oauth_flow if wiring.settings.many_workspaces else None
        self.install_paths = {flow.install_path, flow.redirect_uri_path} if flow else set()

    def __call__(self, environ, start_response):
        path, method = environ.get("PATH_INFO", ""), environ.get("REQUEST_METHOD", "")
        if path == SLACK_PATH and method == "POST":
            with metrics.ACK_SECONDS.labels("http").time():
                return self._slack(environ, start_response)
        if path in self.install_paths and method == "GET":
            return self.bolt(environ, start_response)
        if path == "/healthz" and method in ("GET", "HEAD"):
            return self._health(start_response)
        if path == "/metrics" and method in ("GET", "HEAD"):
            return metrics_page(self.db, start_response)
        return _reply(start_response, HTTPStatus.NOT_FOUND, "Not Found", "text/plain")

    def _slack(self, environ, start_response):
        try:
            length = max(0, int(environ.get("CONTENT_LENGTH") or 0))
        except ValueError:
            length = 0
        timestamp = environ.get("HTTP_X_SLACK_REQUEST_TIMESTAMP", "")
        raw, signed = self._read_signed(environ["wsgi.input"], length, timestamp,
                                        environ.get("HTTP_X_SLACK_SIGNATURE", ""))
        if not signed:
            log.warning("refused an unauthenticated request to %s (%s bytes)", SLACK_PATH, length)
            return _reply(start_response, HTTPStatus.UNAUTHORIZED, '{"error": "invalid request"}',
                          "application/json")
        if raw is None:
            log.warning("refused a signed request of %s bytes: over the limit", length)
            return _reply(start_response, HTTPStatus.REQUEST_ENTITY_TOO_LARGE, "payload too large", "text/plain")
        try:
            body = raw.decode("utf-8")
        except UnicodeDecodeError:
            body = ""
        if not body or not _well_formed(body, environ.get("CONTENT_TYPE", "")):
            log.warning("a signed request with a malformed body was refused")
            return _reply(start_response, HTTPStatus.BAD_REQUEST, "malformed payload", "text/plain")
        return self.bolt({**environ, "wsgi.input": io.BytesIO(raw), "CONTENT_LENGTH": str(len(raw))}, start_response)

    def _read_signed(self, stream, length: int, timestamp: str, signature: str) -> tuple[bytes | None, bool]:
        """(the body, or None when over MAX_BODY; whether Slack's signature holds). Read through the HMAC
        piece by piece, kept only up to the limit."""
        mac = hmac.new(self.secret, f"v0:{timestamp}:".encode(), hashlib.sha256)
        kept, left = [], length
        while left > 0:
            piece = stream.read(min(_PIECE, left))
            if not piece:
                break
            mac.update(piece)
            if length <= MAX_BODY:
                kept.append(piece)
            left -= len(piece)
        fresh = timestamp.isdigit() and abs(time.time() - int(timestamp)) <= STALE_AFTER
        signed = fresh and hmac.compare_digest(f"v0={mac.hexdigest()}", signature)
        return (b"".join(kept) if length <= MAX_BODY else None), signed

    def _health(self, start_response):
        try:
            self.services.healthy()
        except Exception as error:  # noqa: BLE001 - any failure to write means unhealthy
            log.warning("health check: the store cannot be written (%s)", type(error).__name__)
            return _reply(start_response, HTTPStatus.SERVICE_UNAVAILABLE,
                          json.dumps({"ok": False, "store": "not writable"}), "application/json")
        return _reply(start_response, HTTPStatus.OK, json.dumps({"ok": True, "store": "writable"}),
                      "application/json")


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
