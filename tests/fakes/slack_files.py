"""Files as Slack serves them: the file object a message event carries, its private URLs on the
fake server, downloads that need the bot's token, and deletion as the events Slack sends for it.

Invariants (sources: docs.slack.dev/reference/objects/file-object, /reference/events/file_deleted,
/reference/methods/files.info; the login page and tombstones as bots meet them):
- `url_private` is `{server}/files-pri/{team}-{id}/{name}` and `url_private_download` the same with
  `/download/` before the name; both serve the bytes with the file's Content-Type and Content-Length,
  but only to `Authorization: Bearer <token>` where the token is a live bot token of the file's team
  (any `xoxb-` token when the fake was given none: its "any token" mode).
- Without that header (or with another token) Slack does not say 401: it answers 200 with its HTML
  sign-in page. A bot that does not check what it got stores a web page as the file.
- A refusal scripted per file (`403`, `404`, or `"login"`: the sign-in page even with the token)
  holds until cleared; a deleted file answers 404 and `files.info` says `file_deleted`.
- Every GET of a file URL is recorded in `downloads`, served or not, with the token it carried.
- Deleting a file gives the `file_deleted` event and, for a message that shared it, the
  `message_changed` event in which the file has become `{"id": …, "mode": "tombstone"}`.
- `files.info` (docs.slack.dev/reference/methods/files.info: `file` required — a call without it is
  refused as a bug, see slack_spec; the answer `{"ok": true, "file": <file object>, "comments": [],
  "response_metadata": …}`; `file_not_found` for an id it does not know or the caller may not see,
  `file_deleted` for a deleted one) answers only for the calling token's team.
- A Slack Connect file (`connect=`): the message event carries only its stub,
  `{"id": …, "mode": "file_access", "file_access": "check_file_info", "created": 0, "timestamp": 0,
  "user": ""}` — no name, no URL — and the app must call `files.info` for the file object
  (docs.slack.dev/reference/objects/file-object, "Slack Connect files"; docs.slack.dev/reference/
  events/message/file_share, "Slack Connect files"; api.slack.com/apis/channels-between-orgs
  #check_file_info). `connect="visible"`: files.info gives the whole object, `file_access: "visible"`,
  whose URLs serve the bot's token like any file. `connect="hidden"`: the other organisation keeps
  the file from apps — files.info answers `file_not_found` (its documented answer for a file the
  caller may not see) and no URL of it is ever given out.
"""
from __future__ import annotations

import itertools
import threading
import time
from dataclasses import dataclass, field
from pathlib import PurePosixPath
from urllib.parse import quote, urlparse

LOGIN = "login"
REFUSALS = (403, 404, LOGIN)
CONNECT = ("visible", "hidden")

# filetype and pretty_type Slack gives common uploads, by extension
KINDS = {
    "png": ("png", "PNG"), "jpg": ("jpg", "JPEG"), "jpeg": ("jpg", "JPEG"), "gif": ("gif", "GIF"),
    "webp": ("webp", "WebP"), "pdf": ("pdf", "PDF"), "txt": ("text", "Plain Text"), "log": ("text", "Plain Text"),
    "md": ("markdown", "Markdown (raw)"), "csv": ("csv", "CSV"), "json": ("json", "JSON"),
    "py": ("python", "Python"), "js": ("javascript", "JavaScript"), "html": ("html", "HTML"),
    "zip": ("zip", "Zip"), "mp4": ("mp4", "MPEG 4 Video"), "docx": ("docx", "Word Document"),
}

SIGN_IN_PAGE = b"""<!DOCTYPE html>
<html lang="en-US"><head><meta charset="utf-8"><title>Slack</title>
<meta name="robots" content="noindex,nofollow"></head>
<body class="index"><div id="page"><h1>Sign in to Fake</h1>
<form id="signin_form" action="/" method="post"><input type="email" name="email">
<button type="submit" id="signin_btn">Sign in</button></form></div></body></html>
"""
NOT_FOUND_PAGE = b"<!DOCTYPE html><html><head><title>Not Found | Slack</title></head><body>File not found</body></html>"
FORBIDDEN_PAGE = b"<!DOCTYPE html><html><head><title>Forbidden | Slack</title></head><body>Access denied</body></html>"
HTML = "text/html; charset=utf-8"


@dataclass
class SharedFile:
    id: str
    name: str
    title: str
    mimetype: str
    filetype: str
    pretty_type: str
    data: bytes
    user: str
    created: int
    team: str
    refusal: int | str | None = None
    deleted: bool = False
    connect: str | None = None  # a Slack Connect file: "visible" or "hidden" to the app through files.info


@dataclass
class Download:
    url: str
    file_id: str | None
    token: str | None
    status: int
    served: bool  # the file's bytes were sent
    at: float = field(default_factory=time.monotonic)


@dataclass
class FileDeletion:
    """What Slack sends when a file is deleted: deliver these to the app as events."""
    file_deleted: dict
    message_changed: dict | None


class SlackFiles:
    def __init__(self, team: str, base_url, accepts):
        self.team = team
        self._base_url = base_url  # called: the server's port is known once it is bound
        self._accepts = accepts
        self.files: dict[str, SharedFile] = {}
        self.downloads: list[Download] = []
        self._ids = itertools.count(1)
        self._ts = itertools.count(1)
        self._lock = threading.Lock()

    def share(self, name: str, data: bytes, mimetype: str, filetype: str | None = None, *,
              user: str = "UALICE01", title: str | None = None, refuse: int | str | None = None,
              team: str | None = None, connect: str | None = None) -> dict:
        """Register a file; the answer is what a message event's `files` array holds for it (the stub, for
        a Slack Connect file)."""
        if connect is not None and connect not in CONNECT:
            raise ValueError(f"connect must be one of {CONNECT} or None, not {connect!r}")
        extension = PurePosixPath(name).suffix.lower().lstrip(".")
        kind, pretty = KINDS.get(extension, ("binary", "Binary"))
        if filetype and filetype != kind:
            kind, pretty = filetype, next((p for k, p in KINDS.values() if k == filetype), filetype.upper())
        file = SharedFile(f"F0FAKE{next(self._ids):06d}", name, title or name, mimetype, kind, pretty, bytes(data),
                          user, int(time.time()), team or self.team, connect=connect)
        with self._lock:
            self.files[file.id] = file
        if refuse is not None:
            self.refuse(file.id, refuse)
        return self.stub(file.id) if connect else self.file_object(file.id)

    def stub(self, file_id: str) -> dict:
        """A Slack Connect file as message events carry it: call files.info for the rest."""
        return {"id": file_id, "mode": "file_access", "file_access": "check_file_info", "created": 0,
                "timestamp": 0, "user": ""}

    def file_object(self, file_id: str) -> dict:
        """The file as a message event's `files` array and `files.info` show it."""
        file = self.files[file_id]
        base = f"{self._base_url()}/files-pri/{file.team}-{file.id}"
        return {
            "id": file.id, "created": file.created, "timestamp": file.created, "name": file.name,
            "title": file.title, "mimetype": file.mimetype, "filetype": file.filetype,
            "pretty_type": file.pretty_type, "user": file.user, "user_team": file.team, "editable": False,
            "size": len(file.data), "mode": "hosted", "is_external": False, "external_type": "",
            "is_public": True, "public_url_shared": False, "display_as_bot": False, "username": "",
            "url_private": f"{base}/{quote(file.name)}",
            "url_private_download": f"{base}/download/{quote(file.name)}",
            "permalink": f"https://fake.slack.test/files/{file.user}/{file.id}/{quote(file.name)}",
            "permalink_public": f"https://slack-files.com/{file.team}-{file.id}-0fake",
            "is_starred": False, "has_rich_preview": False, "file_access": "visible",
        }

    def refuse(self, file_id: str, how: int | str | None) -> None:
        """From now on answer the file's URLs with 403, 404 or the sign-in page ("login"); None serves it again."""
        if how is not None and how not in REFUSALS:
            raise ValueError(f"refusal must be one of {REFUSALS} or None, not {how!r}")
        with self._lock:
            self.files[file_id].refusal = how

    def delete(self, file_id: str, message: dict | None = None) -> FileDeletion:
        """Delete the file; `message` is the message event that shared it, if the test has one."""
        with self._lock:
            self.files[file_id].deleted = True
        ts = self._event_ts()
        deleted = {"type": "file_deleted", "file_id": file_id, "event_ts": ts}
        if message and message.get("channel"):
            deleted["channel_ids"] = [message["channel"]]
        return FileDeletion(deleted, _tombstoned(message, file_id, ts) if message else None)

    def info(self, file_id: str | None, team: str | None = None) -> dict:
        file = self.files.get(file_id or "")
        if file is None or (team is not None and file.team != team) or file.connect == "hidden":
            return {"ok": False, "error": "file_not_found"}
        if file.deleted:
            return {"ok": False, "error": "file_deleted"}
        return {"ok": True, "file": self.file_object(file.id), "comments": [],
                "response_metadata": {"next_cursor": ""}}

    def serve(self, url: str, token: str | None) -> tuple[int, bytes, dict]:
        """(status, body, headers) for a GET of a file URL, recorded in `downloads`."""
        parts = urlparse(url).path.split("/")  # '', 'files-pri', '{team}-{id}', ['download'], name
        file_id = parts[2].partition("-")[2] if len(parts) > 3 else None
        file = self.files.get(file_id or "")
        status, body, headers = self._answer(file, token, parts)
        with self._lock:
            self.downloads.append(Download(url, file.id if file else None, token, status,
                                           served=file is not None and body is file.data))
        return status, body, headers

    def _answer(self, file: SharedFile | None, token: str | None, parts: list[str]):
        if file is None or file.deleted or file.refusal == 404 or file.connect == "hidden":
            return 404, NOT_FOUND_PAGE, {"Content-Type": HTML}
        if not token or not self._accepts(token, file.team) or file.refusal == LOGIN:
            return 200, SIGN_IN_PAGE, {"Content-Type": HTML}
        if file.refusal == 403:
            return 403, FORBIDDEN_PAGE, {"Content-Type": HTML}
        headers = {"Content-Type": file.mimetype}
        if "download" in parts[3:-1]:
            headers["Content-Disposition"] = f"attachment; filename=\"{quote(file.name)}\""
        return 200, file.data, headers

    def _event_ts(self) -> str:
        n = next(self._ts)
        return f"{1_900_000_000 + n}.{n:06d}"


def _tombstoned(message: dict, file_id: str, ts: str) -> dict:
    """The `message_changed` event Slack sends when a file the message shared is deleted."""
    keep = {k: v for k, v in message.items() if k not in ("channel", "event_ts", "channel_type")}
    files = [{"id": f["id"], "mode": "tombstone"} if f.get("id") == file_id else f for f in message.get("files", [])]
    event = {"type": "message", "subtype": "message_changed", "hidden": True, "channel": message.get("channel"),
             "ts": ts, "event_ts": ts, "message": {**keep, "files": files}, "previous_message": keep}
    if message.get("channel_type"):
        event["channel_type"] = message["channel_type"]
    return event
