"""The door: what happens to a delivery before it is acknowledged, in HTTP and in Socket Mode alike.

First its shape, checked where it comes in (`allowed_shape`: bot/entrypoints/wsgi.py, socket_mode.py), before Bolt,
which itself fails on some: a delivery whose fields are not what Slack's documentation says (an integer
`channel`, a list where an id belongs, a NUL or 40 characters in a ts) is acknowledged and ignored with
one WARNING, before anything is kept or stored — never a traceback, a 404 or a 500.

Only the fields the listeners read are checked, and only where Slack documents them as strings: ids
and timestamps (`is_slack_id`), texts and values (strings). Events the bot does not act on pass as they
are (their `channel` may be an object, as in channel_created).

Then, before Bolt acknowledges it, a delivery worth keeping is recorded in the durable inbox
(bot/services/incoming.py).
- Kept: it is processed, and marked done when its listener returns (see `delivered`).
- Kept before (Slack's retry, a byte-for-byte replay of a signed request): acknowledged, not processed.
- Not recordable (the database is down, the disk is full): not acknowledged — Slack retries an
  event, and in Socket Mode an envelope left unacknowledged is delivered again — except where Slack
  will not retry: a slash command is answered at once, privately, and a button or shortcut is told
  through its response_url; the last retry of an event tells its sender. Nothing is lost silently.
Chatter the bot ignores (channel messages that do not mention it, other reactions, its own posts)
passes the door unrecorded. A slash command whose answer needs nothing stored (`/fork help`, a flag `/fork` does
not know) never reaches it: `answer_at_once` answers it in the acknowledgement, before any listener.
"""
from __future__ import annotations

import hashlib
import json
import logging
from collections.abc import Iterator
from contextlib import contextmanager

from slack_bolt import BoltRequest, BoltResponse

from ..domain.commands import answered_at_once, mentions
from ..domain.model import Channel
from ..domain.text import is_slack_id, storable
from ..services.catalog import Services
from ..services.gestures import ABANDON_REACTIONS, MERGE_REACTIONS, RETRY_REACTIONS
from ..services.ports import Audience, PrivateAnswers
from .settings_view import SETTINGS_VIEW

log = logging.getLogger(__name__)

HUMAN_SUBTYPES = {None, "thread_broadcast", "file_share"}  # message subtypes that carry a person's words
NOT_PEOPLE = {"USLACKBOT"}  # Slackbot posts (reminders, notices) as a user, without a bot_id
ACTED_ON_REACTIONS = MERGE_REACTIONS | ABANDON_REACTIONS | RETRY_REACTIONS
LAST_EVENT_RETRY = 3  # Slack retries an event three times, then gives up
NOT_SAVED = "⚠️ I couldn't save that just now (my storage is unavailable) — please send it again in a minute."

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


def delivery_key(body: dict, bot_user_id: str | None) -> str | None:
    """The inbox key of a delivery worth keeping, or None for one the bot may drop."""
    kind = body.get("type")
    if kind == "event_callback":
        event = body.get("event") if isinstance(body.get("event"), dict) else {}
        worth = _worth_keeping(event, bot_user_id) and body.get("event_id")
        return f"event:{body['event_id']}" if worth else None
    if "command" in body:
        return f"command:{body.get('trigger_id') or _digest(body)}"
    if kind in ("block_actions", "message_action", "shortcut", "view_submission"):
        return f"{kind}:{body.get('trigger_id') or _digest(body)}"
    return None


def _worth_keeping(event: dict, bot_user_id: str | None) -> bool:
    kind, user = event.get("type"), event.get("user")
    if kind == "reaction_added":
        return user != bot_user_id and str(event.get("reaction", "")).split("::")[0] in ACTED_ON_REACTIONS
    if kind == "app_mention":
        return from_person(event, bot_user_id)
    if kind in ("file_deleted", "app_uninstalled", "tokens_revoked", "agent_session_stopped"):
        # what people removed must stop reaching Claude; a workspace that left must be let go; a Stop is
        # obeyed (by whichever replica writes the answer) or its person sees the answer go on
        return True
    if kind != "message":
        return False
    if event.get("subtype") in ("message_changed", "message_deleted"):
        return from_person(event.get("message") or event.get("previous_message") or {}, bot_user_id)
    if event.get("subtype") not in HUMAN_SUBTYPES or not from_person(event, bot_user_id):
        return False
    in_thread = bool(event.get("thread_ts")) and event.get("thread_ts") != event.get("ts")
    return event.get("channel_type") == "im" or in_thread or mentions(event.get("text") or "", bot_user_id)


def from_person(message: dict, bot_user_id: str | None) -> bool:
    """Whether a message (or mention) was written by a person: not the bot itself, not another app
    (`bot_id`), not Slackbot — only a person's message may start a turn."""
    user = message.get("user")
    return (isinstance(user, str) and bool(user) and user != bot_user_id and user not in NOT_PEOPLE
            and not message.get("bot_id"))


def turn_channel(body: dict, team_id: str | None) -> Channel | None:
    """The channel (of the workspace the delivery is for, as its listener names it) of a person's message at
    a channel's or a DM's top level, which may become the conversation's turn. A thread's message is kept
    alone: its turn reads its fork first, and a burst of them (a busy channel's forks) must not make every
    acknowledgement wait for a read as well (bench: burst acks)."""
    event = body.get("event") if body.get("type") == "event_callback" else None
    if not isinstance(event, dict) or event.get("type") not in ("message", "app_mention") \
            or event.get("subtype") not in HUMAN_SUBTYPES or event.get("thread_ts") not in (None, event.get("ts")):
        return None
    channel = event.get("channel")
    return Channel(team_id, channel) if team_id and isinstance(channel, str) and channel else None


def without_tokens(body: dict) -> dict:
    """A delivery as the inbox may keep it: a settings submission's typed tokens emptied (a replay then keeps
    the tokens set before; a token is never stored in plain text, not even for a day)."""
    view = body.get("view") if isinstance(body.get("view"), dict) else None
    if body.get("type") != "view_submission" or not view or view.get("callback_id") != SETTINGS_VIEW:
        return body
    values = (view.get("state") or {}).get("values") or {}
    emptied = {block: ({action: {**element, "value": None} for action, element in elements.items()}
                       if block.endswith("_token") and isinstance(elements, dict) else elements)
               for block, elements in values.items()}
    return {**body, "view": {**view, "state": {**(view.get("state") or {}), "values": emptied}}}


def _digest(body: dict) -> str:
    return hashlib.sha256(json.dumps(body, sort_keys=True).encode()).hexdigest()[:40]


def answer_at_once(services: Services, req: BoltRequest) -> BoltResponse | None:
    """A slash command whose answer needs nothing stored or sent (`/fork help` its usage, `/fork` with a flag it
    does not know the usage and what was wrong), answered in its acknowledgement as Slack suggests for an
    immediate answer — refused instead where Threadfork may not act for that person — or None for any other
    request. Answered here, before the door and the listeners: nothing is kept, and no listener thread is
    handed the request (Bolt's threaded runner looks for a listener's ack only every 10 ms)."""
    body = req.body
    if "command" not in body:
        return None
    answer = answered_at_once(str(body.get("command") or ""), storable(str(body.get("text") or "")))
    if answer is None:
        return None
    channel = Channel(req.context.team_id or body.get("team_id") or "", str(body.get("channel_id") or ""))
    try:
        answer = services.access.refusal_at_once(channel, str(body.get("user_id") or "")) or answer
    except Exception as error:  # noqa: BLE001 - a usage needs nothing stored: shown even when settings can't be read
        log.warning("channel settings unreadable for an answer at once (%s)", type(error).__name__)
    return BoltResponse(status=200, body=json.dumps({"response_type": "ephemeral", "text": answer}),
                        headers={"content-type": "application/json"})


class Door:
    """Bolt global middleware: keep, turn away, or refuse — before the acknowledgement."""

    def __init__(self, services: Services, answers: PrivateAnswers):
        self.services = services
        self.answers = answers

    def __call__(self, req: BoltRequest, resp: BoltResponse, next) -> BoltResponse:
        if req.context.get("delivery"):
            return next()  # a replay out of the inbox
        key = delivery_key(req.body, self.services.bot_user_id(req.context.team_id or ""))
        if key is None:
            return next()
        channel = turn_channel(req.body, req.context.team_id)
        payload = json.dumps(without_tokens(req.body))
        try:
            if channel is None:
                kept = self.services.intake.keep(key, payload)
            else:  # a message that may be a turn: what its turn reads of the channel comes with the keep
                standing = self.services.intake.keep_turn(key, payload, channel)
                kept = standing is not None
        except Exception as error:  # noqa: BLE001 - any store failure means "not recorded"
            log.warning("could not keep delivery %s (%s)", key, type(error).__name__)
            return self._refuse(req)
        if not kept:
            log.info("delivery %s was kept before; acknowledged without processing", key)
            return BoltResponse(status=200, body="")
        req.context["delivery"] = key
        if channel is not None:
            req.context["standing"] = standing
        return next()

    def _refuse(self, req: BoltRequest) -> BoltResponse:
        body = req.body
        if "command" in body:  # Slack never retries a slash command: answer it now
            return BoltResponse(status=200, body=json.dumps({"response_type": "ephemeral", "text": NOT_SAVED}),
                                headers={"content-type": "application/json"})
        retry = int((req.headers.get("x-slack-retry-num") or ["0"])[0] or 0)
        if body.get("type") == "event_callback" and retry < LAST_EVENT_RETRY:
            return BoltResponse(status=503, body="not recorded; deliver again")
        self._tell_sender(body)
        return BoltResponse(status=200, body="")

    def _tell_sender(self, body: dict) -> None:
        audience = sender(body)
        if audience is None:
            return
        try:
            self.answers.tell(audience, NOT_SAVED)
        except Exception:  # noqa: BLE001 - Slack may be part of the outage
            log.warning("could not tell %s that a delivery was not saved", audience.user_id)


def sender(body: dict) -> Audience | None:
    """Who sent a delivery, to answer privately."""
    team = body.get("team_id") or (body.get("team") or {}).get("id") or (body.get("user") or {}).get("team_id") or ""
    if body.get("type") == "event_callback":
        event = body.get("event") or {}
        item = event.get("item") or {}
        channel, user = event.get("channel") or item.get("channel"), event.get("user")
        thread = event.get("thread_ts")
        return Audience(team, channel, user, thread_ts=thread) if channel and isinstance(user, str) else None
    user = body.get("user_id") or (body.get("user") or {}).get("id")
    channel = body.get("channel_id") or (body.get("channel") or {}).get("id")
    if not user or not channel:
        return None
    return Audience(team, channel, user, response_url=body.get("response_url"))


def presser(body: dict, context) -> Audience:
    """Who pressed a button, in which channel of their workspace, answered through its response_url."""
    channel = (body.get("channel") or {}).get("id") or (body.get("container") or {}).get("channel_id") or ""
    return Audience(context.team_id or "", channel, body["user"]["id"], response_url=body.get("response_url"))


@contextmanager
def delivered(services: Services, context) -> Iterator[None]:
    """Around a listener's work: done when it returns; when it raises, its claim lapses and a sweep
    replays it (at most MAX_ATTEMPTS times in all)."""
    key = context.get("delivery")
    try:
        yield
    except Exception:
        if key:
            services.intake.failed(key)
        raise
    if key:
        services.intake.done(key)


class BoltDeliveries:
    """Replays kept deliveries through the same Bolt app (as Socket Mode requests: already verified)."""

    def __init__(self, app, answers: PrivateAnswers):
        self.app = app
        self.answers = answers

    def replay(self, key: str, payload: str) -> None:
        response = self.app.dispatch(BoltRequest(body=json.loads(payload), mode="socket_mode",
                                                 context={"delivery": key}))
        if response.status >= 400:
            raise RuntimeError(f"replaying {key} was answered {response.status}")

    def give_up(self, payload: str) -> None:
        audience = sender(json.loads(payload))
        if audience is not None:
            self.answers.tell(Audience(audience.team_id, audience.channel_id, audience.user_id, audience.thread_ts),
                              "⚠️ I couldn't process what you sent (I tried 3 times) — please send it again.")
