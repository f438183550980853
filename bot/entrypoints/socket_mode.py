"""Socket Mode: the bot's connection to Slack when SLACK_APP_TOKEN is set.

Guarantees:
- It connects to the URL apps.connections.open returns for the app-level token, and acknowledges
  each envelope with its `envelope_id` only after Bolt's dispatch returned — the durable inbox
  (bot/slack/intake.py) has kept the delivery by then; one that could not be kept is left
  unacknowledged, and Slack delivers it again.
- A connection Slack ends is replaced within about a second: on a `disconnect` message slack-sdk's
  built-in client opens a new one at once; a connection closed without one is noticed by its
  monitor, which checks (and pings) every PING_INTERVAL — Bolt's default of 10 s left the bot deaf
  that long. A TCP connection that vanishes without even a close frame is noticed only once five
  pings have failed (~5 s, each an ERROR line from slack-sdk).
- SIGTERM or SIGINT: envelopes arriving from then on are left unacknowledged (Slack delivers them
  again, to another connection); the ones already being dispatched are acknowledged; then the
  connection closes and the process drains as in HTTP mode (bot/entrypoints/runtime.py `stop`) and exits 0,
  logging no traceback.
"""
from __future__ import annotations

import logging
import signal
import threading

from slack_bolt.adapter.socket_mode import SocketModeHandler
from slack_sdk.socket_mode.request import SocketModeRequest
from slack_sdk.socket_mode.response import SocketModeResponse

from ..infrastructure import metrics
from .runtime import Running, stop
from ..slack.intake import allowed_shape

log = logging.getLogger(__name__)

DISPATCH_WAIT = 10.0  # at most how long the envelopes being dispatched may take to be acknowledged at SIGTERM
PING_INTERVAL = 1.0  # seconds between slack-sdk's checks of the connection (each a ping); Bolt's default is 10


class Gate:
    """Open until `close`: counts the envelopes inside, and `close` waits for them to come out."""

    def __init__(self):
        self._changed = threading.Condition()
        self._open = True
        self._inside = 0

    def enter(self) -> bool:
        with self._changed:
            if self._open:
                self._inside += 1
            return self._open

    def leave(self) -> None:
        with self._changed:
            self._inside -= 1
            self._changed.notify_all()

    def close(self, timeout: float) -> int:
        """Let nothing in any more; wait up to `timeout` for those inside; how many are still inside."""
        with self._changed:
            self._open = False
            self._changed.wait_for(lambda: self._inside == 0, timeout)
            return self._inside


class DrainingHandler(SocketModeHandler):
    """Bolt's Socket Mode handler (slack-sdk's built-in client) that checks its connection every
    PING_INTERVAL and stops taking envelopes before it closes it."""

    def __init__(self, app, app_token: str):
        super().__init__(app, app_token, ping_interval=PING_INTERVAL)
        self.gate = Gate()

    def handle(self, client, req: SocketModeRequest) -> None:
        if not self.gate.enter():
            log.info("leaving envelope %s unacknowledged while shutting down: Slack delivers it again",
                     req.envelope_id)
            return
        try:
            with metrics.ACK_SECONDS.labels("socket_mode").time():
                if isinstance(req.payload, dict) and not allowed_shape(req.payload):
                    client.send_socket_mode_response(SocketModeResponse(envelope_id=req.envelope_id))
                    return
                super().handle(client, req)
        finally:
            self.gate.leave()

    def leave(self) -> None:
        """Take no envelope any more, let the ones inside be acknowledged, close the connection."""
        still = self.gate.close(DISPATCH_WAIT)
        if still:
            log.warning("%s envelopes still dispatching after %.0f s; closing anyway", still, DISPATCH_WAIT)
        self.close()


def serve(running: Running, app_token: str) -> None:
    """Connect and serve until SIGTERM or SIGINT, then leave and drain (exits the process)."""
    handler = DrainingHandler(running.wiring.app, app_token)
    leaving = threading.Event()

    def on_signal(signum, _frame):
        log.info("signal %s: closing the Socket Mode connection and draining", signum)
        leaving.set()

    signal.signal(signal.SIGTERM, on_signal)
    signal.signal(signal.SIGINT, on_signal)
    handler.connect()
    log.info("connected in Socket Mode")
    leaving.wait()
    handler.leave()
    stop(running)  # exits 0
