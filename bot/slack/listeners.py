"""Bolt listeners: parse the payload, make one service call. All registered in `register`.

Before any listener runs, the door (intake.py) has recorded a delivery worth keeping in the durable
inbox and turned away one kept before; each listener marks its delivery done when it returns
(`delivered`). A person's message is also claimed by its own channel + ts when it is acted on
(`message` and `app_mention` deliver the same message under two event ids).

Listeners of Slack's agent platform: Stop on a fork's agent session (agent_session_stopped), a
top-level answer's Stop button (`stop_answer`), and what a person views beside the bot's DM
(app_context_changed). Each parses its payload and makes one service call.

Payloads (docs.slack.dev/reference/events/…): agent_session_stopped carries channel, thread_ts, user and
streaming_message_ts; app_context_changed only a `context` whose `entities` (most relevant first) name what
the person views — `slack#/types/channel_id` entities, and `slack#/types/message_context` ones (a message
of a channel). It has no `user` or `channel` of its own: the person is the envelope's authorization (its
`user_id`, `is_bot: false`), as the event's page shows. A DM message carries the same context as `app_context`.
"""
from __future__ import annotations

import functools
import logging
import re

from slack_bolt import App

from ..domain.model import Channel
from ..domain.text import row_id, storable
from ..services.catalog import Services
from ..services.commands import SlashCommand
from ..services.ports import Audience
from ..services.routing import IncomingMessage
from .intake import HUMAN_SUBTYPES, Door, answer_at_once, delivered, from_person, presser
from .memory_listeners import register_memory
from .render import (ABANDON_ACTION, CARRY_ON_ACTION, CONTINUE_ACTION, FEEDBACK_ACTION, FORK_FROM_HERE, MERGE_ACTION,
                     MERGE_THIS_FORK, STOP_ACTION)
from .review_listeners import register_reviews
from .settings_listeners import register_settings
from .shares import FileStubs, MessageFiles, shared_files, shared_messages


log = logging.getLogger(__name__)


def register(app: App, services: Services, stubs: FileStubs | None = None) -> None:
    """Every listener but the catch-alls (`register_fallbacks`, last). `stubs` resolves Slack Connect
    file stubs (files.info); without it they are named as unreadable.

    Bolt tries listeners in the order they were registered, building each one's arguments from the
    request, until one matches: people's messages, by far the most frequent deliveries, come first."""
    door = Door(services, services.chat.answers)

    @app.use
    def at_once(req, resp, next):
        return answer_at_once(services, req) or next()

    @app.use
    def keep_before_ack(req, resp, next):
        return door(req, resp, next)

    @app.event("message")
    def on_message(event, context):
        with delivered(services, context):
            if event.get("subtype") in ("message_changed", "message_deleted"):
                _changed_message(services, event, Channel(_team(context), event["channel"]))
            else:
                _message(services, event, context, stubs)

    @app.event("app_mention")
    def on_mention(event, context):
        with delivered(services, context):
            _message(services, event, context, stubs)

    slash_commands = {"/fork": services.commands.fork, "/merge": services.commands.merge,
                      "/context": services.commands.context, "/forks": services.commands.forks_list}
    for name, use_case in slash_commands.items():
        app.command(name)(_slash_listener(services, use_case))
    app.command("/threadfork")(_slash_listener(services, services.channel_admin.command, gated=False))
    buttons = {MERGE_ACTION: functools.partial(services.gestures.button, verb="merge"),
               ABANDON_ACTION: functools.partial(services.gestures.button, verb="abandon"),
               CONTINUE_ACTION: services.budgets.raise_limit}
    for action_id, use_case in buttons.items():
        app.action(action_id)(_button_listener(services, use_case))
    @app.action(CARRY_ON_ACTION)
    def on_carry_on(ack, body, action, context):
        ack()
        with delivered(services, context):
            session_id, _, reply_id = str(action.get("value", "")).partition(":")
            audience = presser(body, context)
            if session_id.isdigit() and reply_id.isdigit() and services.access.admits(audience):
                services.gestures.carry_on(int(session_id), int(reply_id), audience.user_id, audience.channel)

    register_reviews(app, services)
    register_settings(app, services)
    register_memory(app, services)
    register_agent(app, services)

    @app.action(FEEDBACK_ACTION)
    def on_feedback(ack, body, action, context):
        ack()
        with delivered(services, context):
            container = body.get("container") or {}
            services.gestures.feedback(presser(body, context).channel, container.get("message_ts") or "",
                                       body["user"]["id"], action.get("value") or "")

    @app.shortcut(FORK_FROM_HERE)
    def fork_from_here(ack, shortcut, context):
        ack()
        message = shortcut.get("message") or {}
        with delivered(services, context):
            if not services.access.admits(_shortcut_sender(shortcut, context)):
                return
            services.gestures.fork_from_message(
                Channel(_team(context), shortcut["channel"]["id"]), shortcut["user"]["id"],
                message.get("ts") or shortcut.get("message_ts"), message.get("thread_ts"),
                shortcut.get("response_url"))

    @app.shortcut(MERGE_THIS_FORK)
    def merge_this_fork(ack, shortcut, context):
        ack()
        message = shortcut.get("message") or {}
        with delivered(services, context):
            if not services.access.admits(_shortcut_sender(shortcut, context)):
                return
            services.gestures.merge_from_message(
                Channel(_team(context), shortcut["channel"]["id"]), shortcut["user"]["id"],
                message.get("ts") or shortcut.get("message_ts"), message.get("thread_ts"),
                shortcut.get("response_url"))

    @app.event("app_home_opened")
    def on_home(event, body, context):
        # not kept (a view refresh); one publish (or one set of prompts) per delivery, however often Slack
        # delivers it; the Messages tab is the bot's DM (the agent pane)
        tab = event.get("tab", "home")
        if tab in ("home", "messages") and services.first_delivery(body.get("event_id") or ""):
            if tab == "home":
                services.gestures.home_opened(_team(context), event["user"])
            elif event.get("channel"):
                services.pane.dm_opened(_team(context), event["user"], event["channel"])

    @app.event("file_deleted")
    def on_file_deleted(event, context):
        with delivered(services, context):
            services.gestures.file_deleted(event.get("file_id") or "")

    @app.event("reaction_added")
    def on_reaction(event, context):
        item = event.get("item") or {}
        with delivered(services, context):
            if item.get("type") == "message" and event.get("user") != services.bot_user_id(_team(context)):
                services.gestures.reaction(Channel(_team(context), item["channel"]), item["ts"], event["user"],
                                           event["reaction"])


def register_fallbacks(app: App, services: Services) -> None:
    """After every other listener: whatever else Slack sends is acknowledged (else it retries or shows an
    error) and logged."""
    @app.event(re.compile(".*"))
    def on_other_event(event, context):
        with delivered(services, context):  # one kept (an uninstall with a bot token set) is done too
            log.debug("ignored event %s", event.get("type"))

    @app.action(re.compile(".*"))
    def on_unknown_action(ack, action):
        ack()
        log.warning("unknown action %s ignored", action.get("action_id"))

    @app.shortcut(re.compile(".*"))
    def on_unknown_shortcut(ack, shortcut):
        ack()
        log.warning("unknown shortcut %s ignored", shortcut.get("callback_id"))


def _slash_listener(services: Services, use_case, gated: bool = True):
    """`gated`: refused outside the allow-lists (`/threadfork` is not: admins turn a channel back on). A
    command whose answer needs nothing stored (`/fork help`) never gets here: intake.answer_at_once answers it."""
    def listener(ack, command, context):
        slash = SlashCommand(team_id=_team(context), channel_id=command["channel_id"], user_id=command["user_id"],
                             text=storable(command.get("text") or ""), response_url=command.get("response_url"),
                             trigger_id=command.get("trigger_id"))
        ack()
        with delivered(services, context):
            if not gated or services.access.admits(slash.audience):
                use_case(slash)

    return listener


def _button_listener(services: Services, use_case):
    """A button whose value is a fork id: `use_case(fork_id, user_id, channel)`."""
    def listener(ack, body, action, context):
        ack()
        with delivered(services, context):
            fork_id = _fork_id(action)
            audience = presser(body, context)
            if fork_id is not None and services.access.admits(audience):
                use_case(fork_id, audience.user_id, channel=audience.channel)

    return listener


def _changed_message(services: Services, event: dict, channel: Channel) -> None:
    if event.get("subtype") == "message_changed":
        changed = event.get("message") or {}
        gone = [f["id"] for f in changed.get("files") or [] if f.get("mode") == "tombstone" and f.get("id")]
        for file_id in gone:  # deleted files show as tombstones in their message; its words stay
            services.gestures.file_deleted(file_id)
        if changed.get("subtype") == "tombstone" and changed.get("ts"):
            services.gestures.files_deleted(channel, changed["ts"])
        if changed.get("subtype") == "tombstone":
            return
        if from_person(changed, services.bot_user_id(channel.team_id)) and changed.get("ts"):
            services.gestures.edit_message(channel, changed["ts"], changed["user"],
                                           storable(changed.get("text") or ""), shared_messages(changed))
    elif event.get("deleted_ts"):
        services.gestures.delete_message(channel, event["deleted_ts"])


def _message(services: Services, event: dict, context, stubs: FileStubs | None) -> None:
    """A person's message (a share's content and files included) to the router; nobody else's."""
    if event.get("subtype") not in HUMAN_SUBTYPES or not from_person(event, services.bot_user_id(_team(context))):
        return
    services.router.receive(IncomingMessage(
        team_id=_team(context),
        channel_id=event["channel"],
        channel_type=event.get("channel_type"),
        user_id=event["user"],
        text=storable(event.get("text") or ""),
        ts=event["ts"],
        thread_ts=event.get("thread_ts"),
        files=MessageFiles([*(event.get("files") or []), *shared_files(event)], _team(context), stubs),
        shared=shared_messages(event),
        delivery=context.get("delivery"),
        standing=context.get("standing"),
        viewing=viewed_channels(event.get("app_context")),
    ))


def _shortcut_sender(shortcut: dict, context) -> Audience:
    return Audience(_team(context), shortcut["channel"]["id"], shortcut["user"]["id"],
                    response_url=shortcut.get("response_url"))


def _fork_id(action: dict) -> int | None:
    fork_id = row_id(action.get("value"))
    if fork_id is None:
        log.warning("button %s with a malformed value ignored", str(action.get("action_id"))[:64])
    return fork_id


def _team(context) -> str:
    """The workspace a request comes from (Bolt reads it from the payload): what everything is keyed by."""
    return context.team_id or ""


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
