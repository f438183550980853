"""The sources of an answer that used web research, listed as Markdown links at its end. They are
part of the stored answer, so later requests carry the answer and its sources — never the raw
search results."""
from __future__ import annotations

import re
from collections.abc import Sequence

from .text import looks_like_address

MAX_SOURCES = 10
_BRACKETS = str.maketrans({"[": "(", "]": ")"})


def sources_section(sources: Sequence) -> str:
    """`\\n\\n**Sources**` and a numbered line per source (anything with `url` and `title`); "" for none."""
    if not sources:
        return ""
    lines = [f"{n}. {_link(source.url, source.title)}" for n, source in enumerate(sources[:MAX_SOURCES], 1)]
    return "\n\n**Sources**\n" + "\n".join(lines)


def _link(url: str, title: str) -> str:
    title = re.sub(r"\s+", " ", title or "").strip().translate(_BRACKETS)
    if not title or looks_like_address(title):
        return url  # a bare address links to itself: its text is its target
    return f"[{title}]({url})"
