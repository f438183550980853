"""A person's message, from Slack's payload to the router: the middleware every delivery passes, the message and
mention listeners, and what a message carries (messages shared into it, its files). The rest of what people do
(commands, buttons, shortcuts, reactions, Home) is gesture_listeners.py's; `register` registers both.

The middleware, in order: log lines name the request's team and channel (`about_request`); a slash command
that needs nothing stored is answered at once (intake.answer_at_once); the door (intake.py) records a delivery
worth keeping in the durable inbox and turns away one kept before; a Stop on a fork's agent session, and what a
person views beside the bot's DM, are recorded before the ack. Each listener marks its delivery done when it returns
(`delivered`). A person's message is also claimed by its own channel + ts when it is acted on (`message` and
`app_mention` deliver the same message under two event ids).

Payloads (docs.slack.dev/reference/events/…): agent_session_stopped carries channel, thread_ts, user and
streaming_message_ts; app_context_changed only a `context` whose `entities` (most relevant first) name what
the person views — `slack#/types/channel_id` entities, and `slack#/types/message_context` ones (a message
of a channel). It has no `user` or `channel` of its own: the person is the envelope's authorization (its
`user_id`, `is_bot: false`), as the event's page shows. A DM message carries the same context as `app_context`.

## Shared messages and files

Messages shared or forwarded into a message, as Slack delivers them: each is one of the message's
`attachments` marked `is_share` (a share or forward) or `is_msg_unfurl` (a pasted message link),
carrying the shared message's `text` (or only its `message_blocks`), `author_id` / `author_name` /
`author_subname`, and its own `files` (docs.slack.dev/messaging/formatting-message-text#attachments
for the attachment fields, docs.slack.dev/tools/node-slack-sdk/reference/web-api/interfaces/
MessageAttachment for `author_subname`; the share markers as real payloads carry them).

The sharer's own words stay in the message's `text`: whether the bot was mentioned is read there
only, so sharing a message that mentions the bot is no mention, and a channel share without a
mention stays chatter.

A message's files as SharedFiles, Slack Connect stubs resolved.

A file shared in a Slack Connect channel (or forwarded from one) arrives as a stub —
`{"id": …, "mode": "file_access", "file_access": "check_file_info"}`, no name, no URL — and Slack's
docs say to call `files.info` for the file object (docs.slack.dev/reference/objects/file-object,
"Slack Connect files"). Invariants:
- Any file without `url_private_download` (but a tombstone or an external file) costs one `files.info` per workspace and
  file in this process, however often it arrives (a mention comes as `message` and `app_mention`);
  what Slack answered is reused, a refusal for REFUSAL_TTL seconds.
- Resolution happens when the files are first read (`MessageFiles`), i.e. only for a message that
  becomes a turn: chatter the router ignores costs no call.
- A file Slack still gives no URL for stays without one (`SharedFile.url` None): the attachments
  service names it in its private notice.
"""
from __future__ import annotations

import logging
import re
import threading
import time
from collections import OrderedDict
from collections.abc import Sequence

from slack_bolt import App, BoltResponse
from slack_sdk.errors import SlackApiError, SlackClientError

from ..domain.errors import ChatUnavailable
from ..domain.model import Channel
from ..domain.text import SharedMessage, storable
from ..infrastructure.logs import ABOUT
from ..services.catalog import Services
from ..services.ports import SharedFile
from ..services.incoming import IncomingMessage
from .clients import Clients
from .gesture_listeners import register_gestures
from .intake import HUMAN_SUBTYPES, Door, answer_at_once, delivered, from_person


log = logging.getLogger(__name__)


def about_request(context, next) -> None:  # noqa: A002 - Bolt passes `next` by name
    """Bolt middleware: the request's team and channel ids, for every line logged while it is handled."""
    ids = {key: value for key, value in (("team", context.team_id), ("channel", context.channel_id)) if value}
    token = ABOUT.set(ids)
    try:
        next()
    finally:
        ABOUT.reset(token)


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

    @app.use
    def record_before_ack(req, resp, next):
        # one conditional write each, made before the ack: a Stop (from then on nothing more of the answer streams,
        # on whichever replica writes it; its listener still marks the delivery done) and what a person views (a DM
        # they write after it is read beside it, whichever listener thread runs first; no listener is left to run).
        # A failure here is left to the event's listener, which tries again.
        event = (req.body.get("event") or {}) if req.body.get("type") == "event_callback" else {}
        kind = event.get("type")
        if kind in ("agent_session_stopped", "app_context_changed"):
            try:
                if kind == "agent_session_stopped":
                    _session_stopped(services, event, req.context)
                else:
                    _viewed(services, event, req.body, req.context)
                    return BoltResponse(status=200, body="")
            except Exception:  # noqa: BLE001 - the listener retries it
                log.warning("recording %s before the ack failed; its listener tries again", kind, exc_info=True)
        return next()

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

    @app.event("agent_session_stopped")
    def on_session_stopped(event, context):
        with delivered(services, context):
            _session_stopped(services, event, context)  # done already, normally: then it changes nothing

    @app.event("app_context_changed")
    def on_context_changed(event, body, context):
        _viewed(services, event, body, context)

    register_gestures(app, services)


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


def _session_stopped(services: Services, event: dict, context) -> None:
    if event.get("channel") and event.get("thread_ts") and event.get("user"):
        services.stopping.thread_stopped(Channel(context.team_id or "", event["channel"]), event["thread_ts"],
                                         event["user"])


def _viewed(services: Services, event: dict, body: dict, context) -> None:
    user = _person(body)
    if user:
        services.pane.viewed(context.team_id or "", user, list(viewed_channels(event.get("context")) or ()),
                             str(event.get("event_ts") or ""))


def _person(body: dict) -> str | None:
    """The person an app_context_changed is about: the envelope's authorization that names a person, not the bot."""
    for authorization in body.get("authorizations") or ():
        if isinstance(authorization, dict) and not authorization.get("is_bot") and authorization.get("user_id"):
            return authorization["user_id"]
    return None


REMEMBERED = 1024  # resolved files kept per process
REFUSAL_TTL = 60.0  # seconds a refused files.info is not asked again


class FileStubs:
    def __init__(self, clients: Clients):
        self.clients = clients
        self._known: OrderedDict[tuple[str, str], tuple[dict, float]] = OrderedDict()
        self._guard = threading.Lock()
        self._stripes = [threading.Lock() for _ in range(64)]

    def resolve(self, file: dict, team_id: str) -> dict:
        """The file object to read: `file` itself when it has its download URL, else what files.info gives."""
        if file.get("url_private_download") or file.get("mode") == "tombstone" or file.get("is_external"):
            return file  # readable as it is, gone, or kept outside Slack (a Google Doc): nothing to ask
        key = (team_id, file["id"])
        with self._stripes[hash(key) % len(self._stripes)]:
            with self._guard:
                known = self._known.get(key)
            if known is not None and known[1] > time.monotonic():
                return known[0]
            resolved = self._info(file, team_id)
            lasts = float("inf") if resolved.get("url_private_download") else time.monotonic() + REFUSAL_TTL
            with self._guard:
                self._known[key] = (resolved, lasts)
                while len(self._known) > REMEMBERED:
                    self._known.popitem(last=False)
        return resolved

    def _info(self, file: dict, team_id: str) -> dict:
        try:
            answer = self.clients.for_team(team_id).files_info(file=file["id"])
        except SlackApiError as error:
            log.warning("files.info %s: %s", file["id"], error.response.get("error"))
            return file
        except (SlackClientError, ChatUnavailable, OSError) as error:
            log.warning("files.info %s failed (%s)", file["id"], type(error).__name__)
            return file
        return {**file, **(answer.get("file") or {})}


class MessageFiles(Sequence[SharedFile]):
    """A message's files, resolved on first read; its length is known without asking Slack."""

    def __init__(self, files: list[dict], team_id: str, stubs: FileStubs | None):
        self._raw = [f for f in files if f.get("id") and f.get("mode") != "tombstone"]
        self._team_id = team_id
        self._stubs = stubs
        self._read: tuple[SharedFile, ...] | None = None

    def __len__(self) -> int:
        return len(self._raw)

    def __getitem__(self, index):
        return self._files()[index]

    def _files(self) -> tuple[SharedFile, ...]:
        if self._read is None:
            self._read = tuple(shared_file(self._stubs.resolve(f, self._team_id) if self._stubs else f, self._team_id)
                               for f in self._raw)
        return self._read


def shared_file(file: dict, team_id: str) -> SharedFile:
    return SharedFile(id=file["id"], name=file.get("name") or file.get("title") or file["id"],
                      mimetype=file.get("mimetype") or "", filetype=file.get("filetype") or "",
                      size=int(file.get("size") or 0), url=file.get("url_private_download"), team_id=team_id)


def shares(event: dict) -> list[dict]:
    """The event's attachments that are shared messages, in order."""
    return [a for a in event.get("attachments") or []
            if isinstance(a, dict) and (a.get("is_share") or a.get("is_msg_unfurl"))]


def shared_messages(event: dict) -> tuple[SharedMessage, ...]:
    return tuple(
        SharedMessage(text=storable(share.get("text") or _block_words(share.get("message_blocks"))),
                      author_id=share.get("author_id") or None,
                      author_name=storable(share.get("author_name") or share.get("author_subname") or "") or None,
                      files=tuple(storable(_file_name(f)) for f in _files(share)))
        for share in shares(event))


def shared_files(event: dict) -> list[dict]:
    """The shared messages' own files (file objects, possibly Slack Connect stubs)."""
    return [file for share in shares(event) for file in _files(share)]


def _files(share: dict) -> list[dict]:
    return [f for f in share.get("files") or [] if isinstance(f, dict) and f.get("id")]


def _file_name(file: dict) -> str:
    return file.get("name") or file.get("title") or file["id"]


def _block_words(message_blocks) -> str:
    """The words of a shared message that came only as blocks (rich_text's text and link elements)."""
    lines = []
    for entry in message_blocks or []:
        for block in ((entry or {}).get("message") or {}).get("blocks") or []:
            words = "".join(_element_words(block)).rstrip("\n")
            if words:
                lines.append(words)
    return "\n".join(lines)


def _element_words(element) -> list[str]:
    if not isinstance(element, dict):
        return []
    kind = element.get("type")
    if kind == "text":
        return [element.get("text") or ""]
    if kind == "link":
        return [element.get("text") or element.get("url") or ""]
    if kind == "user" and element.get("user_id"):
        return [f"<@{element['user_id']}>"]
    words = [piece for child in element.get("elements") or [] for piece in _element_words(child)]
    if kind in ("rich_text_section", "rich_text_preformatted", "rich_text_quote") and words:
        words.append("\n")
    return words
