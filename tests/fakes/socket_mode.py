"""A fake Slack Socket Mode server: the WebSocket end of Slack's Socket Mode, as strict as Slack.

Sources: docs.slack.dev/apis/events-api/using-socket-mode (the URL from apps.connections.open, the
`hello` message, envelopes of `events_api`, `slash_commands` and `interactive` with `envelope_id`,
`payload` and `accepts_response_payload`, acks `{"envelope_id", "payload"?}`, `disconnect` with
`reason` `warning` / `refresh_requested` / `link_disabled`), docs.slack.dev/reference/methods/
apps.connections.open (an app-level token; `{"ok": true, "url": "wss://…/link/?ticket=…&app_id=…"}`),
and docs.slack.dev/tools/python-slack-sdk/reference/socket_mode/request.html (an `events_api`
envelope's `retry_attempt` and `retry_reason`).

Invariants:
- A connection needs a ticket FakeSlack issued from apps.connections.open (`ticket_url`), good for one
  connection; any other handshake is refused (HTTP 403). Each connection gets `hello` first.
- An envelope goes to the newest open connection (none open: it is not delivered) and waits there
  for its ack. An ack must be a JSON
  object naming an envelope that connection holds unacknowledged, with `payload` only where the
  envelope `accepts_response_payload`; anything else is recorded in `violations` (the tests assert
  it empty), as is an ack for an envelope already acknowledged.
- An envelope left unacknowledged (`send` answers None) stays `pending`; `retry_of` makes Slack's
  retry of it: a new envelope id, `retry_attempt` one higher and `retry_reason` "timeout".
- With `tls`, wss:// on port 443 of a loopback address of its own (127.x.y.z): slack-sdk's built-in client
  speaks TLS only to port 443 (socket_mode/builtin/internals.py; any other port is plain, "for library
  testing"), and Slack's wss:// URLs carry no port. Binding it needs root (or a lowered
  net.ipv4.ip_unprivileged_port_start), as the project's machines and CI have.
- `disconnect(reason)` sends Slack's `disconnect` message and closes the connection a moment later
  (not after `warning`); `hang_up()` closes it with no message first; `drop()` ends the TCP
  connection with neither message nor close frame (a lost front end).
"""
from __future__ import annotations

import errno
import itertools
import json
import random
import threading
import time
import uuid
from dataclasses import dataclass, field
from http import HTTPStatus

from websockets.exceptions import ConnectionClosed
from websockets.sync.server import ServerConnection, serve

from .slack_teams import APP_ID
from .tls import server_context

ACCEPTS_RESPONSE = {"events_api": False, "slash_commands": True, "interactive": True}
DISCONNECT_REASONS = {"warning", "refresh_requested", "link_disabled"}


@dataclass
class Envelope:
    type: str
    payload: dict
    envelope_id: str = field(default_factory=lambda: str(uuid.uuid4()))
    retry_attempt: int = 0
    retry_reason: str = ""
    ack: dict | None = None
    acked: threading.Event = field(default_factory=threading.Event, repr=False)

    def message(self) -> dict:
        message = {"envelope_id": self.envelope_id, "payload": self.payload, "type": self.type,
                   "accepts_response_payload": ACCEPTS_RESPONSE[self.type]}
        if self.type == "events_api":
            message.update(retry_attempt=self.retry_attempt, retry_reason=self.retry_reason)
        return message


@dataclass
class Link:
    """One open WebSocket connection of the app."""
    connection: ServerConnection
    opened: float
    held: dict[str, Envelope] = field(default_factory=dict)  # sent, not yet acknowledged


class FakeSocketMode:
    def __init__(self, tls: bool = False):
        """`tls`: serve wss:// with the tests' certificate authority (tls.py), as Slack serves it."""
        self.tls = tls
        self.violations: list[str] = []
        self.links: list[Link] = []  # open connections, oldest first
        self.connected: list[float] = []  # when each connection said hello (time.monotonic())
        self.acks: list[dict] = []  # every ack, in order
        self.pending: dict[str, Envelope] = {}  # unacknowledged, by envelope id
        self._tickets: set[str] = set()
        self._counter = itertools.count(1)
        self._lock = threading.Condition()
        self.server = self._tls_server() if tls else self._listening("127.0.0.1", 0, None)
        self.host, self.port = self.server.socket.getsockname()[:2]
        self.thread = threading.Thread(target=self.server.serve_forever, daemon=True)

    def start(self) -> FakeSocketMode:
        self.thread.start()
        return self

    def stop(self) -> None:
        self.server.shutdown()
        self.thread.join(timeout=5)

    # what FakeSlack's apps.connections.open answers ----------------------------------------

    def ticket_url(self) -> str:
        ticket = f"{next(self._counter):04d}-{uuid.uuid4().hex[:8]}"
        with self._lock:
            self._tickets.add(ticket)
        where = f"wss://{self.host}" if self.tls else f"ws://{self.host}:{self.port}"
        return f"{where}/link/?ticket={ticket}&app_id={APP_ID}"

    # what Slack does ----------------------------------------------------------------------

    def retry_of(self, envelope: Envelope) -> Envelope:
        """Slack's retry of an envelope left unacknowledged: a new id, `retry_attempt` one higher."""
        with self._lock:
            self.pending.pop(envelope.envelope_id, None)
            for link in self.links:
                link.held.pop(envelope.envelope_id, None)
        return Envelope(envelope.type, envelope.payload, retry_attempt=envelope.retry_attempt + 1,
                        retry_reason="timeout")

    def send(self, envelope: Envelope, *, timeout: float = 10.0) -> dict | None:
        """Send an envelope to the newest connection; its ack, or None when none came within `timeout`."""
        with self._lock:
            self.pending[envelope.envelope_id] = envelope
            if not self.links:  # nobody to deliver to: it waits for Slack's retry
                return None
            link = self.links[-1]
            link.held[envelope.envelope_id] = envelope
        try:
            link.connection.send(json.dumps(envelope.message()))
        except ConnectionClosed:
            return None
        return envelope.ack if envelope.acked.wait(timeout) else None

    def disconnect(self, reason: str = "refresh_requested", *, close_after: float = 0.2) -> None:
        """Slack's `disconnect` message on the newest connection, which Slack closes `close_after` later."""
        assert reason in DISCONNECT_REASONS
        link = self.wait_connected()
        link.connection.send(json.dumps({"type": "disconnect", "reason": reason,
                                         "debug_info": {"host": "wss-fake.slack.test"}}))
        if reason != "warning":
            threading.Timer(close_after, link.connection.close).start()

    def hang_up(self) -> None:
        """The newest connection is closed (a close frame) without a `disconnect` message first."""
        link = self.wait_connected()
        threading.Thread(target=link.connection.close, daemon=True).start()

    def drop(self) -> None:
        """The newest connection ends without a `disconnect` message or a close frame."""
        link = self.wait_connected()
        link.connection.close_socket()

    # waiting ------------------------------------------------------------------------------

    def wait_connected(self, after: float = 0.0, timeout: float = 10.0) -> Link:
        """The newest open connection (one opened after `after`, a time.monotonic())."""
        deadline = time.monotonic() + timeout
        with self._lock:
            while not (self.links and self.links[-1].opened > after):
                remaining = deadline - time.monotonic()
                assert remaining > 0, "the app never connected"
                self._lock.wait(remaining)
            return self.links[-1]

    # the server ---------------------------------------------------------------------------

    def _listening(self, host: str, port: int, tls):
        return serve(self._serve, host, port, process_request=self._admit, compression=None, ping_interval=None,
                     close_timeout=1, ssl=tls)

    def _tls_server(self):
        """Port 443 of a loopback address no other fake (or test run) holds."""
        for _ in range(50):
            host = f"127.{random.randint(1, 254)}.{random.randint(0, 255)}.{random.randint(1, 254)}"
            try:
                return self._listening(host, 443, server_context(host))
            except OSError as error:
                if error.errno != errno.EADDRINUSE:
                    raise
        raise RuntimeError("no free loopback address for port 443")

    def _admit(self, connection: ServerConnection, request):
        """The handshake: a ticket FakeSlack issued and nobody used yet, else 403."""
        path, _, query = request.path.partition("?")
        params = dict(part.partition("=")[::2] for part in query.split("&") if part)
        with self._lock:
            ticket = params.get("ticket")
            if path != "/link/" or ticket not in self._tickets:
                return connection.respond(HTTPStatus.FORBIDDEN, "invalid or used ticket\n")
            self._tickets.discard(ticket)
        return None

    def _serve(self, connection: ServerConnection) -> None:
        link = Link(connection, time.monotonic())
        # hello and joining `links` are one step: once the app has read hello, `send` may deliver to it
        with self._lock:
            count = len(self.links) + 1
            connection.send(json.dumps({"type": "hello", "num_connections": count,
                                        "connection_info": {"app_id": APP_ID},
                                        "debug_info": {"host": "applink-fake", "build_number": 1,
                                                       "approximate_connection_time": 3600}}))
            self.links.append(link)
            self.connected.append(link.opened)
            self._lock.notify_all()
        try:
            for raw in connection:
                self._acknowledged(link, raw)
        except ConnectionClosed:
            pass
        finally:
            with self._lock:
                self.links.remove(link)

    def _acknowledged(self, link: Link, raw) -> None:
        try:
            ack = json.loads(raw)
        except (TypeError, ValueError):
            self.violations.append(f"an ack that is not JSON: {raw!r:.80}")
            return
        with self._lock:
            envelope = link.held.pop(ack.get("envelope_id"), None) if isinstance(ack, dict) else None
            if envelope is None:
                self.violations.append(f"an ack for no envelope this connection holds: {raw!r:.120}")
                return
            extra = set(ack) - {"envelope_id", "payload"}
            if extra or ("payload" in ack and not ACCEPTS_RESPONSE[envelope.type]):
                self.violations.append(f"an ack Slack would refuse ({sorted(extra) or 'payload'}) for a "
                                       f"{envelope.type} envelope")
            self.pending.pop(envelope.envelope_id, None)
            self.acks.append(ack)
            envelope.ack = ack
        envelope.acked.set()


def serving(slack, tls: bool = False):
    """A test's Socket Mode server, the one the fake Slack's apps.connections.open hands out (a fixture's body:
    `yield from serving(slack)`); stopped after the test, which then fails on any ack Slack would refuse."""
    server = FakeSocketMode(tls=tls).start()
    slack.socket_mode = server
    yield server
    server.stop()
    assert not server.violations, f"acks Slack would refuse: {server.violations}"
