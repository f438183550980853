"""Payload shapes checked where a delivery comes in (bot/entrypoints/wsgi.py, bot/entrypoints/socket_mode.py), before Bolt, which
itself fails on some: a delivery whose fields are not what Slack's documentation says (an integer
`channel`, a list where an id belongs, a NUL or 40 characters in a ts) is acknowledged and ignored with
one WARNING, before anything is kept or stored — never a traceback, a 404 or a 500.

Only the fields the listeners read are checked, and only where Slack documents them as strings: ids
and timestamps (`is_slack_id`), texts and values (strings). Events the bot does not act on pass as they
are (their `channel` may be an object, as in channel_created).
"""
from __future__ import annotations

import logging

from ..domain.text import is_slack_id

log = logging.getLogger(__name__)

EVENT_IDS = {  # events the bot acts on → their id fields (a dotted path in the event)
    "message": ("channel", "user", "ts", "thread_ts", "deleted_ts", "message.ts", "message.user",
                "message.thread_ts"),
    "app_mention": ("channel", "user", "ts", "thread_ts"),
    "reaction_added": ("user", "item.channel", "item.ts"),
    "agent_session_stopped": ("channel", "user", "thread_ts"),
    "app_home_opened": ("user", "channel"),
    "app_context_changed": ("user",),
    "file_deleted": ("file_id",),
}
EVENT_TEXTS = ("text", "subtype", "reaction", "tab", "message.text", "message.subtype", "channel_type")
ACTION_IDS = ("user.id", "channel.id", "container.channel_id", "container.message_ts", "container.thread_ts",
              "message.ts", "message.thread_ts", "message_ts")
ACTION_CLEAN = ("view.private_metadata", "view.callback_id", "response_url", "trigger_id", "callback_id")
COMMAND_IDS = ("channel_id", "user_id")
COMMAND_TEXTS = ("text",)  # people's words: a NUL in them is dropped later (text.storable), not refused
COMMAND_CLEAN = ("command", "response_url", "trigger_id")
ENTITY_TYPES = {"slack#/types/channel_id": "value", "slack#/types/message_context": "value.channel_id"}


def misshapen(body: dict) -> str | None:
    """The first field of a delivery that is not as Slack documents it (named for the log), or None."""
    if body.get("type") == "event_callback":
        event = body.get("event")
        if not isinstance(event, dict) or not isinstance(event.get("type"), str):
            return "event"
        ids = EVENT_IDS.get(event["type"])
        if ids is None:
            return None
        return (_first(event, ids, is_slack_id) or _first(event, EVENT_TEXTS, _is_text)
                or _entities(event.get("context")) or _entities(event.get("app_context")))
    if "command" in body:
        return (_first(body, COMMAND_IDS, is_slack_id) or _first(body, COMMAND_TEXTS, _is_text)
                or _first(body, COMMAND_CLEAN, _is_clean))
    if body.get("type") in ("block_actions", "message_action", "shortcut", "view_submission", "view_closed"):
        actions = body.get("actions")
        if actions is not None and not (isinstance(actions, list) and all(
                isinstance(a, dict) and _first(a, ("action_id", "value", "block_id"), _is_clean) is None
                for a in actions)):
            return "actions"
        return _first(body, ACTION_IDS, is_slack_id) or _first(body, ACTION_CLEAN, _is_clean)
    return None


def allowed_shape(payload: dict) -> bool:
    """Whether a delivery may go on to Bolt (which itself fails on some misshapen ones, before any
    middleware); one that may not is to be acknowledged and dropped — said here, in one WARNING."""
    problem = misshapen(payload)
    if problem is not None:
        log.warning("ignored a %s delivery whose %s is not as Slack sends it", _kind(payload), problem)
    return problem is None


def _first(payload: dict, paths, check) -> str | None:
    for path in paths:
        if not _absent(value := _at(payload, path)) and not check(value):
            return path
    return None


def _absent(value) -> bool:
    return value is _ABSENT or value is None or value == ""


def _entities(context) -> str | None:
    if context is None:
        return None
    if not isinstance(context, dict):
        return "context"
    entities = context.get("entities")
    if entities is None:
        return None
    if not isinstance(entities, list):
        return "context.entities"
    for entity in entities:
        if not isinstance(entity, dict):
            return "context.entities"
        path = ENTITY_TYPES.get(entity.get("type"))
        if path and not _absent(value := _at(entity, path)) and not is_slack_id(value):
            return f"context.entities.{path}"
    return None


_ABSENT = object()


def _at(payload, path: str):
    for key in path.split("."):
        if not isinstance(payload, dict) or key not in payload:
            return _ABSENT
        payload = payload[key]
    return payload


def _is_text(value) -> bool:
    return isinstance(value, str)


def _is_clean(value) -> bool:
    """A string Slack writes itself (a value, an id of ours, a URL): never a NUL."""
    return isinstance(value, str) and "\x00" not in value


def _kind(body) -> str:
    if not isinstance(body, dict):
        return "malformed"
    event = body.get("event")
    kind = event.get("type") if isinstance(event, dict) else body.get("type") or body.get("command")
    return str(kind)[:40]
