"""Bolt listeners of what people do besides writing: slash commands, buttons (a fork's Merge and Abandon, a budget's
Continue, a cut answer's Continue, 👍/👎, a top-level answer's Stop), message shortcuts, reactions, the Home tab,
deleted files. Each parses its payload and makes one service call; registered by listeners.register, after the
message listeners (the review, settings and memory listeners with them).
"""
from __future__ import annotations

import functools
import logging

from slack_bolt import App

from ..domain.model import Channel
from ..domain.text import row_id, storable
from ..services.catalog import Services
from ..services.commands import SlashCommand
from ..services.ports import Audience
from .intake import delivered, presser
from .memory_listeners import register_memory
from .render import ABANDON_ACTION, CONTINUE_ACTION, FORK_FROM_HERE, MERGE_ACTION, MERGE_THIS_FORK
from .reply import CARRY_ON_ACTION, FEEDBACK_ACTION, STOP_ACTION
from .review_listeners import register_reviews
from .settings_listeners import register_settings

log = logging.getLogger(__name__)


def register_gestures(app: App, services: Services) -> None:
    """Every listener of a gesture, after the message listeners (see listeners.register)."""
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

    @app.action(FEEDBACK_ACTION)
    def on_feedback(ack, body, action, context):
        ack()
        with delivered(services, context):
            container = body.get("container") or {}
            services.gestures.feedback(presser(body, context).channel, container.get("message_ts") or "",
                                       body["user"]["id"], action.get("value") or "")

    def on_message(gesture: str):
        """A message shortcut's listener: the message it was used on handed to the `gesture` of services.gestures
        (looked up at each delivery, as every listener here does), once access admits it."""
        def listener(ack, shortcut, context):
            ack()
            message = shortcut.get("message") or {}
            with delivered(services, context):
                if not services.access.admits(_shortcut_sender(shortcut, context)):
                    return
                getattr(services.gestures, gesture)(
                    Channel(_team(context), shortcut["channel"]["id"]), shortcut["user"]["id"],
                    message.get("ts") or shortcut.get("message_ts"), message.get("thread_ts"),
                    shortcut.get("response_url"))
        return listener

    app.shortcut(FORK_FROM_HERE)(on_message("fork_from_message"))
    app.shortcut(MERGE_THIS_FORK)(on_message("merge_from_message"))

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
