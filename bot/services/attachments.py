"""Files people share become part of their turn: downloaded from Slack once, checked against what
Claude can take, and kept once per content — an image or PDF uploaded to Anthropic's Files API (a
request then names it by id: a few bytes, the same every time, so the prompt cache keeps working),
a text file as its text. A file that cannot be taken is skipped with one private notice naming it
and why; the rest of the turn is answered. A file Slack gives no download URL for (a Slack Connect
file it will not show the bot even through files.info, an external file) is one of those."""
from __future__ import annotations

import hashlib
import io
import logging
import threading
from collections.abc import Sequence
from datetime import timedelta

import imagesize
import pypdf

from ..domain.errors import ThreadforkError
from ..domain.files import (
    IMAGE_SIDE_LIMIT,
    PDF_PAGE_LIMIT,
    TEXT_LIMIT,
    Readable,
    Unreadable,
    check_content,
    check_size,
    readable,
)
from ..domain.model import Attachment, FileKind
from ..domain.text import mrkdwn, storable
from .ports import Clock, Erasure, Files, Model, Shared, SharedFile, StoredFile

log = logging.getLogger(__name__)

NOT_DOWNLOADABLE = "Slack would not let me download it"
RECENT_FILES = 1024
UNUSED_GRACE = 600.0  # seconds: a content kept this recently may be about to be attached to its turn


class Attachments:
    def __init__(self, shared: Shared, model: Model, max_file_bytes: int,
                 *, files: Files, erasure: Erasure, clock: Clock):
        self.files, self.erasure, self.clock = files, erasure, clock
        self.shared = shared
        self.model = model
        self.max_file_bytes = max_file_bytes
        # one download per Slack file at a time (a mention arrives as `message` and `app_mention`)
        self._stripes = [threading.Lock() for _ in range(64)]
        self._recent: dict[str, StoredFile] = {}  # Slack file id → its content, for the second delivery

    def prepare(self, files: Sequence[SharedFile]) -> tuple[list[Attachment], str | None]:
        """The files Claude can take, as attachments, and a notice naming those skipped and why (None
        when none was): whoever stores the turn tells it, once."""
        kept, skipped = [], []
        for file in files:
            try:
                kept.append(self._attach(file))
            except Unreadable as reason:
                skipped.append(f"*{mrkdwn(file.name)}* ({reason})")
        if not skipped:
            return kept, None
        rest = " I answer the rest of your message." if kept or len(skipped) < len(files) else ""
        return kept, f"I left out {', '.join(skipped)}.{rest}"

    def _attach(self, file: SharedFile) -> Attachment:
        if not file.url:
            raise Unreadable(NOT_DOWNLOADABLE)
        kind = readable(file.mimetype, file.filetype, file.name)
        check_size(kind, file.size, self.max_file_bytes)
        with self._one_at_a_time(file.id):
            stored = self._recent.get(file.id)
            if stored is not None and self.files.known(stored.sha256) is None:
                stored = None  # its content was deleted since (a forget, the retention policy): fetch it again
            stored = stored or self.files.known_shared(file.id) or self._fetch(file, kind)
            self._recent[file.id] = stored
            while len(self._recent) > RECENT_FILES:
                self._recent.pop(next(iter(self._recent)))
        return Attachment(stored.kind, storable(file.name), stored.media_type, file.id, stored.sha256,
                          stored.file_id, stored.text)

    def _fetch(self, file: SharedFile, kind: Readable) -> StoredFile:
        try:
            data = self.shared.download(file)
        except ThreadforkError:
            raise Unreadable(NOT_DOWNLOADABLE) from None
        check_content(kind, data)
        check_size(kind, len(data), self.max_file_bytes)
        sha256 = hashlib.sha256(data).hexdigest()
        stored = self.files.known(sha256)
        if stored is None:
            stored = self._keep(file, kind, data, sha256)
        return stored

    def _keep(self, file: SharedFile, kind: Readable, data: bytes, sha256: str) -> StoredFile:
        text = file_id = None
        if kind.kind is FileKind.TEXT:
            text = storable(data.decode("utf-8", errors="replace"))
            if len(text) > TEXT_LIMIT:
                raise Unreadable(f"it is too long to read ({len(text):,} characters; the limit is {TEXT_LIMIT:,})")
        else:
            _check_pages_and_pixels(kind, data)
            try:
                file_id = self.model.upload(storable(file.name), kind.media_type, data)
            except ThreadforkError as error:
                raise Unreadable(f"Claude's file store did not take it ({error})") from None
        stored = StoredFile(sha256, kind.kind, kind.media_type, len(data), file_id, text)
        self.files.keep(stored)
        return self.files.known(sha256) or stored  # the copy kept first, if two raced

    def drop_unused(self) -> None:
        """The sweep: contents no turn shares any more are deleted, here and in Claude's file store."""
        grace = self.clock() - timedelta(seconds=UNUSED_GRACE)
        for file_id in self.erasure.drop_unused_files(grace):
            try:
                self.model.forget_upload(file_id)
            except ThreadforkError as error:
                log.warning("could not delete file %s from Claude's file store: %s", file_id, error)

    def _one_at_a_time(self, slack_file_id: str) -> threading.Lock:
        return self._stripes[hash(slack_file_id) % len(self._stripes)]


def _check_pages_and_pixels(kind: Readable, data: bytes) -> None:
    if kind.kind is FileKind.DOCUMENT:
        try:
            pages = len(pypdf.PdfReader(io.BytesIO(data)).pages)
        except Exception:  # noqa: BLE001 - pypdf raises many kinds for a broken file
            raise Unreadable("it is not a PDF Claude can open") from None
        if pages > PDF_PAGE_LIMIT:
            raise Unreadable(f"it has {pages} pages; Claude reads PDFs up to {PDF_PAGE_LIMIT}")
    elif kind.kind is FileKind.IMAGE:
        width, height = imagesize.get(io.BytesIO(data))
        if max(width, height) > IMAGE_SIDE_LIMIT:
            raise Unreadable(f"it is {width}×{height} pixels; Claude takes images up to {IMAGE_SIDE_LIMIT} a side")
