"""Messages shared or forwarded into a message, as Slack delivers them: each is one of the message's
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
import threading
import time
from collections import OrderedDict
from collections.abc import Sequence

from slack_sdk.errors import SlackApiError, SlackClientError

from ..domain.errors import ChatUnavailable
from ..domain.text import SharedMessage, storable
from ..services.ports import SharedFile
from .clients import Clients


log = logging.getLogger(__name__)

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
