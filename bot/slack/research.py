"""How Claude's web research and connector calls show while they work: in a fork's thread, each
search, fetch or MCP tool call as a Slack task card (a `task_update` chunk of the stream) that
completes with its sources, or a connector call's one-line `output`; at a channel's top level, a
status line at the end of the message being updated. (Slack's TaskUpdateChunk: id, title, status,
details, output — at most 256 characters —, sources; docs.slack.dev, TaskUpdateChunk.) Everything a tool
said — its name, query, result, error, a source's title — is data: shown `inert` (no mention, no link
behind a label), cut to an excerpt."""
from __future__ import annotations

from urllib.parse import urlsplit

from ..domain.text import inert, looks_like_address, mrkdwn
from ..services.ports import Source

TITLE_LIMIT = 120
OUTPUT_LIMIT = 256
MAX_CARD_SOURCES = 5


def task_title(name: str, detail: str) -> str:
    """A search's, a fetch's, or a connector call's ("connector · tool", as named already)."""
    what = f"Searching the web for “{detail}”" if name == "web_search" else \
        f"Reading {_place(detail)}" if name == "web_fetch" else name
    return inert(what, TITLE_LIMIT)


def task_chunk(tool_id: str, title: str, status: str, sources: list[Source] = (), output: str = "") -> dict:
    """A task card's update, as chat.startStream / appendStream take it."""
    chunk = {"type": "task_update", "id": tool_id, "title": title, "status": status}
    if output:
        chunk["output"] = inert(output, OUTPUT_LIMIT)
    if sources:
        chunk["sources"] = [{"type": "url", "url": s.url, "text": _label(s.title, s.url)}
                            for s in sources[:MAX_CARD_SOURCES]]
    return chunk


def status_line(title: str) -> str:
    """The line under a top-level answer while Claude researches."""
    return f"\n\n_🔎 {mrkdwn(title)}…_"


def _label(title: str, url: str) -> str:
    """A source's label: its title, or its own address where the title could pass for another one."""
    shown = inert(title or "", TITLE_LIMIT)
    return url[:TITLE_LIMIT] if not shown or looks_like_address(shown) else shown


def _place(url: str) -> str:
    parts = urlsplit(url)
    return (parts.hostname or url) + (parts.path if parts.path not in ("", "/") else "")
