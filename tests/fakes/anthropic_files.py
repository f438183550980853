"""The fake Anthropic's Files API: upload (multipart/form-data, a `file` part), metadata, list and
delete, keeping the bytes so Messages requests can use `file` sources.

Sources: platform.claude.com "Files API" and its API reference, the anthropic SDK's FileMetadata,
DeletedFile and SyncPageCursor types, and mozilla-ai/otari #1473 quoting the GA migration notes.
The Files API is generally available: no beta header is needed. A request that still sends
`anthropic-beta: files-api-2025-04-14` gets the beta shapes, as the API keeps them for it:
- a file object is {type "file", id "file_…", filename, mime_type, size_bytes, created_at (RFC 3339),
  downloadable false} plus `expires_at` (null unless `expires_in_seconds`) without the beta header;
- the list is {data, next_page} paged by `page` (or up to 100 `ids[]`), and with the beta header
  {data, first_id, last_id, has_more} paged by `after_id`/`before_id` (400 without it); newest first;
- DELETE answers {id, type "file_deleted"}; an unknown or deleted id is 404 `not_found_error`;
- an upload keeps the last path component of the part's filename (an empty one becomes `unnamed`),
  takes the part's Content-Type as the mime type (guessed from the name when it is
  application/octet-stream), and is 413 `request_too_large` over 500 MB (`upload_limit`);
- `/content` of an uploaded file is 400 with `details.error_code` "file_not_downloadable".
The wordings of the 400s for a missing `file` part and of the 404 are the fake's own.
"""
from __future__ import annotations

import email.parser
import email.policy
import itertools
import mimetypes
import threading
import time
from dataclasses import dataclass, field
from datetime import datetime, timedelta, timezone
from pathlib import PurePosixPath, PureWindowsPath
from urllib.parse import parse_qs, urlparse

FILES_BETA = "files-api-2025-04-14"
UPLOAD_LIMIT = 500 * 1024 * 1024
TOO_LARGE = (413, {"error": {"type": "request_too_large", "message": "Request exceeds the maximum size"}})


def rfc3339(moment: datetime) -> str:
    return moment.isoformat(timespec="milliseconds").replace("+00:00", "Z")


@dataclass
class StoredFile:
    id: str
    filename: str
    mime_type: str
    data: bytes
    created_at: datetime
    expires_at: datetime | None = None
    deleted: bool = False

    def metadata(self, beta: bool = False) -> dict:
        found = {"type": "file", "id": self.id, "filename": self.filename, "mime_type": self.mime_type,
                 "size_bytes": len(self.data), "created_at": rfc3339(self.created_at), "downloadable": False}
        if not beta:
            found["expires_at"] = rfc3339(self.expires_at) if self.expires_at else None
        return found


@dataclass
class Upload:
    file_id: str
    filename: str
    mime_type: str
    size: int
    beta: bool  # the request carried the files beta header
    at: float = field(default_factory=time.monotonic)


def error(status: int, kind: str, message: str, details: dict | None = None) -> tuple[int, dict]:
    body = {"type": kind, "message": message, **({"details": details} if details else {})}
    return status, {"type": "error", "error": body, "request_id": "req_fakefiles"}


class FilesStore:
    def __init__(self):
        self.files: dict[str, StoredFile] = {}
        self.uploads: list[Upload] = []
        self.upload_limit = UPLOAD_LIMIT
        self._ids = itertools.count(1)
        self._lock = threading.Lock()

    def sources(self) -> dict[str, tuple[str, bytes]]:
        """file_id → (mime_type, bytes) of every file still held: what `file` sources may name."""
        with self._lock:
            return {f.id: (f.mime_type, f.data) for f in self.files.values() if not f.deleted}

    def add(self, filename: str, data: bytes, mime_type: str, expires_in: int | None = None) -> StoredFile:
        now = datetime.now(timezone.utc)
        stored = StoredFile(f"file_011CFake{next(self._ids):012d}", filename, mime_type, bytes(data), now,
                            now + timedelta(seconds=expires_in) if expires_in else None)
        with self._lock:
            self.files[stored.id] = stored
        return stored

    def handle(self, method: str, url: str, headers, body: bytes, betas: set[str]) -> tuple[int, dict]:
        beta = FILES_BETA in betas
        parts = urlparse(url).path.rstrip("/").split("/")  # '', 'v1', 'files', [id, ['content']]
        query = parse_qs(urlparse(url).query)
        if len(parts) == 3:
            if method == "POST":
                return self._upload(headers.get("Content-Type", ""), body, beta)
            if method == "GET":
                return self._list(query, beta)
        if len(parts) in (4, 5):
            stored = self.files.get(parts[3])
            if stored is None or stored.deleted:
                return error(404, "not_found_error", f"File not found: {parts[3]}")
            if len(parts) == 5 and parts[4] == "content" and method == "GET":
                return error(400, "invalid_request_error", f"File {stored.id} is not downloadable.",
                             {"error_code": "file_not_downloadable"})
            if len(parts) == 4 and method == "GET":
                return 200, stored.metadata(beta)
            if len(parts) == 4 and method == "DELETE":
                stored.deleted = True
                return 200, {"id": stored.id, "type": "file_deleted"}
        return error(404, "not_found_error", "Not found")

    def _upload(self, content_type: str, body: bytes, beta: bool) -> tuple[int, dict]:
        if len(body) > self.upload_limit:
            return TOO_LARGE
        if not content_type.startswith("multipart/form-data"):
            return error(400, "invalid_request_error", "Content-Type must be multipart/form-data")
        form = email.parser.BytesParser(policy=email.policy.HTTP).parsebytes(
            b"Content-Type: " + content_type.encode() + b"\r\n\r\n" + body)
        fields = {part.get_param("name", header="content-disposition"): part for part in form.iter_parts()}
        part = fields.get("file")
        if part is None or part.get_filename() is None:
            return error(400, "invalid_request_error", "file: Field required")
        expires = fields.get("expires_in_seconds")
        expires_in = int(expires.get_content().strip()) if expires is not None else None
        if expires_in is not None and not 3600 <= expires_in <= 7_776_000:
            return error(400, "invalid_request_error", "expires_in_seconds: Input should be between 3600 and 7776000")
        name = PurePosixPath(PureWindowsPath(part.get_filename()).as_posix()).name
        mime = part.get_content_type()
        if mime == "application/octet-stream":
            mime = mimetypes.guess_type(name)[0] or mime
        if not name:
            name = "unnamed" + (mimetypes.guess_extension(mime) or "")
        stored = self.add(name, part.get_payload(decode=True) or b"", mime, expires_in)
        with self._lock:
            self.uploads.append(Upload(stored.id, stored.filename, stored.mime_type, len(stored.data), beta))
        return 200, stored.metadata(beta)

    def _list(self, query: dict, beta: bool) -> tuple[int, dict]:
        with self._lock:
            held = sorted((f for f in self.files.values() if not f.deleted), key=lambda f: f.id, reverse=True)
        limit = int(query.get("limit", ["20"])[0])
        if not 1 <= limit <= 1000:
            return error(400, "invalid_request_error", "limit: Input should be between 1 and 1000")
        if beta:
            return 200, _beta_page(held, query, limit)
        if "after_id" in query or "before_id" in query:
            return error(400, "invalid_request_error",
                         f"after_id and before_id need the {FILES_BETA} beta header; page with `page`")
        ids = query.get("ids[]") or query.get("ids")
        if ids:
            return 200, {"data": [f.metadata() for f in held if f.id in ids], "next_page": None}
        start = int(query.get("page", ["page_0"])[0].removeprefix("page_") or 0)
        chosen = held[start:start + limit]
        following = f"page_{start + limit}" if start + limit < len(held) else None
        return 200, {"data": [f.metadata() for f in chosen], "next_page": following}


def _beta_page(held: list[StoredFile], query: dict, limit: int) -> dict:
    ids = [f.id for f in held]
    if "after_id" in query and query["after_id"][0] in ids:
        held = held[ids.index(query["after_id"][0]) + 1:]
    elif "before_id" in query and query["before_id"][0] in ids:
        held = held[:ids.index(query["before_id"][0])][-limit:]
    chosen = held[:limit]
    return {"data": [f.metadata(beta=True) for f in chosen], "first_id": chosen[0].id if chosen else None,
            "last_id": chosen[-1].id if chosen else None, "has_more": len(held) > limit}
