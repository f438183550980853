"""Bolt listeners: parse the payload, make one service call. All registered in `register`.

Every event delivery is acknowledged at once (Slack retries anything else); the listener then
claims the event_id in the store and drops a delivery already claimed, whichever replica saw it.
Claiming after the ack keeps the database off the ack's path. A person's message needs no event
claim: it is claimed by its own ts when it is acted on (`message` and `app_mention` deliver the same
message under two event ids), so channel chatter the bot ignores costs no write.
"""
from __future__ import annotations

import functools
import logging
import re

from slack_bolt import App

from ..services.commands import SlashCommand
from ..services.facade import Services
from ..services.routing import IncomingMessage
from .render import ABANDON_ACTION, CONTINUE_ACTION, FORK_FROM_HERE, MERGE_ACTION, MERGE_THIS_FORK

log = logging.getLogger(__name__)

# message subtypes that carry a person's words; edits, deletions, joins and bot posts do not
_HUMAN_SUBTYPES = {None, "thread_broadcast", "file_share"}


def register(app: App, services: Services) -> None:
    once = _once_per_event(services)
    slash_commands = {"/fork": services.commands.fork, "/merge": services.commands.merge,
                      "/context": services.commands.context, "/forks": services.commands.forks_list}
    for name, use_case in slash_commands.items():
        app.command(name)(_slash_listener(use_case))
    buttons = {MERGE_ACTION: functools.partial(services.gestures.button, verb="merge"),
               ABANDON_ACTION: functools.partial(services.gestures.button, verb="abandon"),
               CONTINUE_ACTION: services.budgets.raise_limit}
    for action_id, use_case in buttons.items():
        app.action(action_id)(_button_listener(use_case))

    @app.shortcut(FORK_FROM_HERE)
    def fork_from_here(ack, shortcut):
        ack()
        message = shortcut.get("message") or {}
        services.gestures.fork_from_message(
            (shortcut.get("team") or {}).get("id"), shortcut["channel"]["id"], shortcut["user"]["id"],
            message.get("ts") or shortcut.get("message_ts"), message.get("thread_ts"), shortcut.get("response_url"))

    @app.shortcut(MERGE_THIS_FORK)
    def merge_this_fork(ack, shortcut):
        ack()
        message = shortcut.get("message") or {}
        services.gestures.merge_from_message(
            shortcut["channel"]["id"], shortcut["user"]["id"], message.get("ts") or shortcut.get("message_ts"),
            message.get("thread_ts"), shortcut.get("response_url"))

    @app.event("app_home_opened")
    @once
    def on_home(event, body):
        if event.get("tab", "home") == "home":
            services.gestures.home_opened(event["user"])

    @app.event("app_mention")
    def on_mention(event, body):
        _message(services, event, body)

    @once  # a late retry of an edit must not undo a newer one
    def on_change(event, body):
        _changed_message(services, event)

    @app.event("message")
    def on_message(event, body):
        if event.get("subtype") in ("message_changed", "message_deleted"):
            on_change(event, body)
        else:
            _message(services, event, body)

    @app.event("reaction_added")
    @once
    def on_reaction(event, body):
        item = event.get("item") or {}
        if item.get("type") != "message" or event.get("user") == services.bot_user_id:
            return
        services.gestures.reaction(item["channel"], item["ts"], event["user"], event["reaction"])

    # whatever else Slack sends is acknowledged (else it retries or shows an error) and logged
    @app.event(re.compile(".*"))
    def on_other_event(event):
        log.debug("ignored event %s", event.get("type"))

    @app.action(re.compile(".*"))
    def on_unknown_action(ack, action):
        ack()
        log.warning("unknown action %s ignored", action.get("action_id"))

    @app.shortcut(re.compile(".*"))
    def on_unknown_shortcut(ack, shortcut):
        ack()
        log.warning("unknown shortcut %s ignored", shortcut.get("callback_id"))


def _slash_listener(use_case):
    def listener(ack, command):
        ack()
        use_case(SlashCommand(team_id=command.get("team_id"), channel_id=command["channel_id"],
                              user_id=command["user_id"], text=command.get("text") or "",
                              response_url=command.get("response_url")))

    return listener


def _button_listener(use_case):
    """A button whose value is a fork id: `use_case(fork_id, user_id, channel_id)`."""
    def listener(ack, body, action):
        ack()
        fork_id = _fork_id(action)
        if fork_id is not None:
            use_case(fork_id, body["user"]["id"], channel_id=_channel(body))

    return listener


def _once_per_event(services: Services):
    """Run an event listener once per event_id, however often Slack delivers the event."""
    def decorate(listener):
        @functools.wraps(listener)
        def once(event, body):
            event_id = body.get("event_id")
            if event_id and not services.first_delivery(event_id):
                log.info("duplicate delivery of %s dropped", event_id)
                return
            listener(event, body)

        return once

    return decorate


def _changed_message(services: Services, event: dict) -> None:
    if event.get("subtype") == "message_changed":
        changed = event.get("message") or {}
        if changed.get("user") and not changed.get("bot_id") and changed.get("ts"):
            services.gestures.edit_message(event["channel"], changed["ts"], changed["user"], changed.get("text") or "")
    elif event.get("deleted_ts"):
        services.gestures.delete_message(event["channel"], event["deleted_ts"])


def _message(services: Services, event: dict, body: dict) -> None:
    if event.get("subtype") not in _HUMAN_SUBTYPES or event.get("bot_id") or not event.get("user"):
        return
    if event["user"] == services.bot_user_id:
        return
    services.router.receive(IncomingMessage(
        team_id=body.get("team_id") or event.get("team"),
        channel_id=event["channel"],
        channel_type=event.get("channel_type"),
        user_id=event["user"],
        text=event.get("text") or "",
        ts=event["ts"],
        thread_ts=event.get("thread_ts"),
    ))


def _fork_id(action: dict) -> int | None:
    try:
        return int(action.get("value", ""))
    except ValueError:
        log.warning("button %s with a malformed value ignored", action.get("action_id"))
        return None


def _channel(body: dict) -> str | None:
    return (body.get("channel") or {}).get("id") or (body.get("container") or {}).get("channel_id")
