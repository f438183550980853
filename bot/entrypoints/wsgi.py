"""HTTP mode's one WSGI application: gunicorn serves it in production, the tests serve the same
class in-process.

POST /slack/events: a body that declares (Content-Length) or turns out to hold more than MAX_BODY bytes gets
413 before it is read, whoever sent it. Then Slack's signature is verified, first, for every request, by
slack-sdk's SignatureVerifier: anything unsigned, forged or stale gets 401 and one short log line that holds
nothing the sender wrote (Bolt's own check would log the whole body). A signed but malformed body gets 400
(Bolt would raise, the server answer 500), so garbage never reaches a listener. Then Bolt's WSGI adapter
takes over, without checking the signature again. GET /healthz says whether the store can be written.
Installing into many workspaces: GET /slack/install and GET /slack/oauth_redirect (or the path of
THREADFORK_INSTALL_REDIRECT_URL) go to Bolt's OAuth flow as they are — a person's browser sends them,
Slack signs nothing there; the flow checks its own state instead. GET /metrics: Prometheus' exposition
(bot/infrastructure/metrics.py). Every other path is 404. Nothing here logs a request's body or headers.
"""
from __future__ import annotations

import io
import json
import logging
from http import HTTPStatus
from urllib.parse import parse_qs

from slack_bolt.adapter.wsgi import SlackRequestHandler
from slack_sdk.signature import SignatureVerifier

from ..app import Wiring
from ..infrastructure import metrics
from .health import metrics_page
from ..slack.intake import allowed_shape

log = logging.getLogger(__name__)

SLACK_PATH = "/slack/events"
MAX_BODY = 1_000_000  # Slack's payloads are far smaller


class HttpApp:
    def __init__(self, wiring: Wiring):
        self.services = wiring.services
        self.db = wiring.db
        self.bolt = SlackRequestHandler(wiring.app, path=SLACK_PATH)
        self.verifier = SignatureVerifier(wiring.settings.slack_signing_secret.get_secret_value())
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
            declared = max(0, int(environ.get("CONTENT_LENGTH") or 0))
        except ValueError:
            declared = 0
        raw = None if declared > MAX_BODY else _read(environ, declared)
        if raw is None:  # declared over the limit: nothing read; chunked and over it: no more than the limit
            log.warning("refused a request of over %s bytes", MAX_BODY)
            return _reply(start_response, HTTPStatus.REQUEST_ENTITY_TOO_LARGE, "payload too large", "text/plain")
        if not self._signed(raw, environ):
            log.warning("refused an unauthenticated request (%s bytes)", len(raw))
            return _reply(start_response, HTTPStatus.UNAUTHORIZED, '{"error": "invalid request"}',
                          "application/json")
        try:
            body = raw.decode("utf-8")
        except UnicodeDecodeError:
            body = ""
        payload = _parsed(body, environ.get("CONTENT_TYPE", "")) if body else None
        if payload is None:
            log.warning("a signed request with a malformed body was refused")
            return _reply(start_response, HTTPStatus.BAD_REQUEST, "malformed payload", "text/plain")
        if not allowed_shape(payload):  # acknowledged (Slack would retry a refusal) and dropped, said once
            return _reply(start_response, HTTPStatus.OK, "", "text/plain")
        return self.bolt({**environ, "wsgi.input": io.BytesIO(raw), "CONTENT_LENGTH": str(len(raw))}, start_response)

    def _signed(self, raw: bytes, environ) -> bool:
        """Slack's signature and a timestamp within its replay window, as slack-sdk checks them."""
        try:
            return self.verifier.is_valid(raw, environ.get("HTTP_X_SLACK_REQUEST_TIMESTAMP"),
                                          environ.get("HTTP_X_SLACK_SIGNATURE"))
        except ValueError:  # a timestamp that is no number, a body that is no UTF-8: not Slack's
            return False

    def _health(self, start_response):
        try:
            self.services.healthy()
        except Exception as error:  # noqa: BLE001 - any failure to write means unhealthy
            log.warning("health check: the store cannot be written (%s)", type(error).__name__)
            return _reply(start_response, HTTPStatus.SERVICE_UNAVAILABLE,
                          json.dumps({"ok": False, "store": "not writable"}), "application/json")
        return _reply(start_response, HTTPStatus.OK, json.dumps({"ok": True, "store": "writable"}),
                      "application/json")


def _read(environ, declared: int) -> bytes | None:
    """The body, or None when it holds more than MAX_BODY bytes. Without a Content-Length, only a body the
    server ends for us (a chunked one, `wsgi.input_terminated`) is read."""
    stream = environ["wsgi.input"]
    if declared:
        return stream.read(declared)
    if not environ.get("wsgi.input_terminated"):
        return b""
    raw = stream.read(MAX_BODY + 1)
    return None if len(raw) > MAX_BODY else raw


def _parsed(body: str, content_type: str) -> dict | None:
    """The payload, in the shapes Bolt expects (a JSON event envelope, a slash command form, or a
    `payload=` form); None for anything else."""
    try:
        if "json" in content_type:
            envelope = json.loads(body)
            if not isinstance(envelope, dict) or not isinstance(envelope.get("type"), str):
                return None
            if envelope["type"] == "event_callback" and not (
                    isinstance(envelope.get("event"), dict) and isinstance(envelope["event"].get("type"), str)):
                return None
            return envelope
        form = parse_qs(body, keep_blank_values=True)
        if "payload" in form:
            payload = json.loads(form["payload"][0])
            return payload if isinstance(payload, dict) and isinstance(payload.get("type"), str) else None
        return {key: values[0] for key, values in form.items()} if "command" in form or "ssl_check" in form else None
    except ValueError:
        return None


def _reply(start_response, status: HTTPStatus, body: str, content_type: str):
    data = body.encode("utf-8")
    start_response(f"{status.value} {status.phrase}",
                   [("Content-Type", content_type), ("Content-Length", str(len(data)))])
    return [data]
