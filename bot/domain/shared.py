"""A message someone shared or forwarded with their own, as Claude reads it: plain text inside the
sharer's turn, after their own words, quoted and marked as shared —

    what do you make of this?

    [shared a message from alice <@U123>]
    > the build is red again

Invariants: pure and byte-stable — the same shares and words always give the same bytes (no dates,
links or ids that change), so the turn they are stored in keeps the prompt cache warm; the shared
text is quoted verbatim, line by line, so it can never pass for the sharer's own words.
"""
from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass


@dataclass(frozen=True)
class SharedMessage:
    """What a share carries: the shared message's words, who wrote them, the names of its files."""

    text: str
    author_id: str | None = None
    author_name: str | None = None
    files: tuple[str, ...] = ()


def with_shared(words: str, shared: Sequence[SharedMessage]) -> str:
    """The sharer's words followed by each shared message, e.g.
    `with_shared("see?", [SharedMessage("red", "U1", "alice")])` → "see?\\n\\n[shared a message from alice <@U1>]\\n> red"."""
    parts = [words] if words else []
    parts.extend(quoted(message) for message in shared)
    return "\n\n".join(parts)


def quoted(message: SharedMessage) -> str:
    header = f"[shared a message from {_author(message)}"
    if message.files:
        header += f", with {', '.join(message.files)}"
    lines = [header + "]"]
    lines.extend(f"> {line}" if line else ">" for line in message.text.splitlines())
    return "\n".join(lines)


def _author(message: SharedMessage) -> str:
    name, user = (message.author_name or "").strip(), (message.author_id or "").strip()
    if name and user:
        return f"{name} <@{user}>"
    if user:
        return f"<@{user}>"
    return name or "someone"
