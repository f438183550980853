"""Slack delivering what people do to an app in Socket Mode: exactly the payloads the HTTP tests sign
and post (slack_actor.py builds them), each sent as the envelope Socket Mode wraps it in.

Invariants: an Events API body becomes an `events_api` envelope (an `X-Slack-Retry-Num` header becomes
its `retry_attempt`), a slash command's form fields the `slash_commands` payload, an interaction's
`payload` field the `interactive` payload. The Reply is 200 with the ack's `payload` as its body (what
the HTTP answer's body would be) when the app acknowledged in time, else status 0: unacknowledged.
"""
from __future__ import annotations

import json
import urllib.parse

from ..harness import Reply
from . import slack_payloads as payloads
from .slack_actor import SlackActor
from .socket_mode import Envelope, FakeSocketMode

UNACKNOWLEDGED = 0


class SocketModeSlack(SlackActor):
    def __init__(self, slack, socket: FakeSocketMode, ack_timeout: float = 10.0):
        self.slack = slack
        self.socket = socket
        self.ack_timeout = ack_timeout

    def post(self, body: bytes, content_type: str, headers: dict | None = None) -> Reply:
        kind, payload = envelope_of(body, content_type)
        envelope = Envelope(kind, payload)
        retry = int((headers or {}).get("X-Slack-Retry-Num", 0))
        if retry:
            envelope.retry_attempt, envelope.retry_reason = retry, "timeout"
        ack = self.socket.send(envelope, timeout=self.ack_timeout)
        if ack is None:
            return Reply(UNACKNOWLEDGED, "")
        return Reply(200, json.dumps(ack["payload"]) if "payload" in ack else "")

    def wrapped(self, event: dict, event_id: str, team=None) -> dict:
        """The Events API body of `event`, as `event` would send it."""
        return payloads.envelope(event, self.slack.team(team), event_id)


def envelope_of(body: bytes, content_type: str) -> tuple[str, dict]:
    """(envelope type, payload) of what the HTTP tests would have posted."""
    if content_type.startswith("application/json"):
        return "events_api", json.loads(body)
    form = dict(urllib.parse.parse_qsl(body.decode(), keep_blank_values=True))
    if "payload" in form:
        return "interactive", json.loads(form["payload"])
    return "slash_commands", form
