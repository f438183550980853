"""Which shared files Claude can read, and within which limits (Anthropic's API limits, checked
before anything is uploaded, so a file Claude would refuse is skipped with its reason instead of
failing the whole turn).

- Images: PNG, JPEG, GIF, WebP — at most 5 MB and 8,000 pixels a side.
- PDFs: at most 32 MB and 100 pages.
- Text-like files (plain text, Markdown, CSV, JSON, code, logs) are read as text, up to
  TEXT_LIMIT characters.
Everything else is skipped. The bot's own cap on any one file (THREADFORK_MAX_FILE_BYTES) comes first.
"""
from __future__ import annotations

from dataclasses import dataclass

from .model import FileKind

IMAGE_TYPES = {"image/png", "image/jpeg", "image/gif", "image/webp"}
IMAGE_LIMIT = 5 * 1024 * 1024
IMAGE_SIDE_LIMIT = 8000
PDF_LIMIT = 32 * 1024 * 1024
PDF_PAGE_LIMIT = 100
TEXT_LIMIT = 200_000  # characters: ~50K tokens, a quarter of the context window
TEXT_FILETYPES = {  # Slack's `filetype`s that are text whatever their mimetype says
    "text", "markdown", "post", "csv", "tsv", "json", "yaml", "xml", "html", "css", "javascript", "typescript",
    "python", "java", "c", "cpp", "csharp", "go", "rust", "ruby", "php", "kotlin", "swift", "scala", "shell",
    "sql", "diff", "log", "toml", "ini", "dockerfile", "makefile", "perl", "r", "lua", "haskell", "clojure",
    "elixir", "erlang", "groovy", "matlab", "objc", "powershell", "vb", "vbscript", "verilog", "vhdl", "latex",
}
_MAGIC = {"image/png": (b"\x89PNG\r\n\x1a\n",), "image/jpeg": (b"\xff\xd8\xff",),
          "image/gif": (b"GIF87a", b"GIF89a"), "application/pdf": (b"%PDF-",)}


@dataclass(frozen=True)
class Readable:
    """How Claude takes a file: its kind and the media type sent with it."""

    kind: FileKind
    media_type: str


class Unreadable(Exception):
    """A file Claude cannot take; `str()` says why, in a few words fit to show."""


def readable(mimetype: str, filetype: str, name: str) -> Readable:
    """The kind of a shared file, from what Slack says of it; raises Unreadable for other files."""
    mimetype = (mimetype or "").split(";")[0].strip().lower()
    if mimetype in IMAGE_TYPES:
        return Readable(FileKind.IMAGE, mimetype)
    if mimetype == "application/pdf" or filetype == "pdf":
        return Readable(FileKind.DOCUMENT, "application/pdf")
    if mimetype.startswith("text/") or filetype in TEXT_FILETYPES or mimetype in ("application/json", "application/xml"):
        return Readable(FileKind.TEXT, mimetype or "text/plain")
    shown = mimetype or filetype or name.rsplit(".", 1)[-1]
    raise Unreadable(f"Claude can't read this kind of file ({shown})")


def check_size(readable: Readable, size: int, cap: int) -> None:
    """Raises Unreadable when a file is too large for the bot's cap or the API's limit for its kind."""
    if size > cap:
        raise Unreadable(f"it is larger than the {megabytes(cap)} limit ({megabytes(size)})")
    limit = {FileKind.IMAGE: IMAGE_LIMIT, FileKind.DOCUMENT: PDF_LIMIT}.get(readable.kind)
    if limit and size > limit:
        raise Unreadable(f"Claude takes {readable.kind.value}s up to {megabytes(limit)} ({megabytes(size)})")


def check_content(readable: Readable, data: bytes) -> None:
    """Raises Unreadable when the bytes are not the file Slack described (e.g. an HTML login page)."""
    if readable.kind is FileKind.TEXT:
        if b"\x00" in data[:8192]:
            raise Unreadable("it is not text")
        return
    if readable.media_type == "image/webp":
        ok = data[:4] == b"RIFF" and data[8:12] == b"WEBP"
    else:
        ok = data.startswith(_MAGIC[readable.media_type])
    if not ok:
        raise Unreadable("Slack did not send the file itself")


def megabytes(size: int) -> str:
    return f"{size / (1024 * 1024):.1f} MB" if size < 10 * 1024 * 1024 else f"{size // (1024 * 1024)} MB"
