"""Split Markdown into pieces under a size limit without breaking code fences.

A piece that ends inside a fenced block closes the fence, and the next piece reopens it with the
same info string, so every piece renders on its own and nothing is repeated or lost.
"""
from __future__ import annotations

FENCE = "```"


def split_markdown(text: str, limit: int) -> list[str]:
    if len(text) <= limit:
        return [text]
    pieces: list[str] = []
    current: list[str] = []
    size = 0
    fence: str | None = None  # the opening line of the fence we are inside
    for line in _lines(text, limit - 2 * len(FENCE) - 64):
        reopen = (fence + "\n") if (fence is not None and not current) else ""
        closing = len(FENCE) + 1 if fence is not None else 0
        if current and size + len(line) + closing > limit:
            pieces.append("".join(current) + (("\n" if not current[-1].endswith("\n") else "") + FENCE
                                              if fence is not None else ""))
            current, size = [], 0
            reopen = (fence + "\n") if fence is not None else ""
        if reopen:
            current.append(reopen)
            size += len(reopen)
        current.append(line)
        size += len(line)
        if line.lstrip().startswith(FENCE):
            fence = None if fence is not None else line.strip()
    if current:
        pieces.append("".join(current))
    return pieces


def _lines(text: str, width: int):
    """Lines with their newlines; a line longer than `width` is cut into parts."""
    for line in text.splitlines(keepends=True):
        while len(line) > width:
            yield line[:width]
            line = line[width:]
        yield line
