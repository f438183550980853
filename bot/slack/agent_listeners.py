"""Listeners of Slack's agent platform: Stop on a fork's agent session (agent_session_stopped), a
top-level answer's Stop button (`stop_answer`), and what a person views beside the bot's DM
(app_context_changed). Each parses its payload and makes one service call.

Payloads (docs.slack.dev/reference/events/…): agent_session_stopped carries channel, thread_ts, user and
streaming_message_ts; app_context_changed only a `context` whose `entities` (most relevant first) name what
the person views — `slack#/types/channel_id` entities, and `slack#/types/message_context` ones (a message
of a channel). It has no `user` or `channel` of its own: the person is the envelope's authorization (its
`user_id`, `is_bot: false`), as the event's page shows. A DM message carries the same context as `app_context`.
"""
from __future__ import annotations

import logging

from slack_bolt import App

from ..domain.ids import row_id
from ..domain.model import Channel
from ..services.catalog import Services
from .intake import delivered, presser
from .render import STOP_ACTION

log = logging.getLogger(__name__)

CHANNEL_ENTITY = "slack#/types/channel_id"
MESSAGE_ENTITY = "slack#/types/message_context"


def viewed_channels(context) -> tuple[str, ...] | None:
    """The channels a context's entities name, most relevant first; None for no context at all."""
    if context is None:
        return None
    entities = (context or {}).get("entities") if isinstance(context, dict) else None
    found = []
    for entity in entities if isinstance(entities, list) else ():
        if not isinstance(entity, dict):
            continue
        value = entity.get("value")
        if entity.get("type") == CHANNEL_ENTITY and isinstance(value, str):
            found.append(value)
        elif entity.get("type") == MESSAGE_ENTITY and isinstance(value, dict) and value.get("channel_id"):
            found.append(value["channel_id"])
    return tuple(found)


def register_agent(app: App, services: Services) -> None:
    """After the door (bot/slack/intake.py): a Stop is recorded before Slack is acknowledged."""

    @app.use
    def stop_before_ack(req, resp, next):
        # one conditional write, made before the ack: from then on nothing more of the answer streams,
        # on whichever replica writes it (a failure here is left to the listener, which tries again)
        event = (req.body.get("event") or {}) if req.body.get("type") == "event_callback" else {}
        if event.get("type") == "agent_session_stopped":
            try:
                _session_stopped(services, event, req.context)
            except Exception:  # noqa: BLE001 - the listener retries it
                log.warning("recording a Stop before the ack failed; the listener tries again", exc_info=True)
        return next()

    @app.event("agent_session_stopped")
    def on_session_stopped(event, context):
        with delivered(services, context):
            _session_stopped(services, event, context)  # done already, normally: then it changes nothing

    @app.event("app_context_changed")
    def on_context_changed(event, body, context):
        user = _person(body)
        if user:
            services.pane.viewed(context.team_id or "", user, list(viewed_channels(event.get("context")) or ()))

    @app.action(STOP_ACTION)
    def on_stop(ack, body, action, context):
        ack()
        with delivered(services, context):
            reply_id = row_id(action.get("value"))
            if reply_id is None:
                log.warning("a Stop button with a malformed value ignored")
                return
            audience = presser(body, context)
            services.stopping.pressed(audience.channel, reply_id, audience.user_id)


def _session_stopped(services: Services, event: dict, context) -> None:
    if event.get("channel") and event.get("thread_ts") and event.get("user"):
        services.stopping.thread_stopped(Channel(context.team_id or "", event["channel"]), event["thread_ts"],
                                         event["user"])


def _person(body: dict) -> str | None:
    """The person an app_context_changed is about: the envelope's authorization that names a person, not the bot."""
    for authorization in body.get("authorizations") or ():
        if isinstance(authorization, dict) and not authorization.get("is_bot") and authorization.get("user_id"):
            return authorization["user_id"]
    return None
