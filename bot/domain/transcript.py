"""An adopted thread's earlier messages, as the one user turn that opens its fork.

- Everything said in the thread before Threadfork was mentioned becomes ONE user turn: the bot's
  own earlier posts in it are quoted there too (marked as its own), never replayed as assistant
  turns, so the Messages API's user/assistant alternation holds whatever the thread held.
- Each message starts with a line naming who wrote it, as every user turn does (context.py).
- Files shared in the thread are named, never read: Claude is told it has not seen them.
- It is written once, when the thread is adopted, and stored: later requests send the same bytes.
  A thread too long for it keeps its first message and its latest ones (TRANSCRIPT_LIMIT).
"""
from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from decimal import Decimal

from .text import speaker_line

SPEAKER = "earlier in this thread"  # the speaker line of the transcript turn itself
YOURS = "[Threadfork (you)]"
INTRO = ("These messages were written in this Slack thread before you (Threadfork) were mentioned in it. "
         f"Each starts with a line naming who wrote it; {YOURS} marks your own earlier posts. Files shared "
         "in the thread are only named: you have not seen their contents.")
TRANSCRIPT_LIMIT = 120_000  # characters (~30K tokens): what a thread may take of the fork's context
TOPIC_LIMIT = 150  # characters of the thread's first message that name the fork


@dataclass(frozen=True)
class Quoted:
    """One earlier message of the thread, its speaker resolved."""

    text: str
    author_id: str | None = None
    author_name: str | None = None
    yours: bool = False  # posted by Threadfork itself
    files: tuple[str, ...] = ()  # names of the files shared with it


def transcript(messages: Sequence[Quoted], limit: int = TRANSCRIPT_LIMIT) -> str | None:
    """The transcript turn's text; None when no message has words or files."""
    entries = [entry for entry in map(_entry, messages) if entry]
    if not entries:
        return None
    kept, left_out = _fit(entries, limit - len(INTRO))
    if left_out:
        kept.insert(1, f"[… {left_out} earlier message{'s' if left_out > 1 else ''} of the thread left out …]")
    return "\n\n".join([INTRO, *kept])


def topic(first_message: str) -> str:
    """The fork's topic: the first line of the thread's first message, shortened."""
    line = next((part.strip() for part in first_message.splitlines() if part.strip()), "")
    return line if len(line) <= TOPIC_LIMIT else line[: TOPIC_LIMIT - 1].rstrip() + "…"


def before(ts: str, cutoff: str) -> bool:
    """Slack message `ts` was posted strictly before `cutoff` (ts are decimal strings)."""
    return Decimal(ts) < Decimal(cutoff)


def _entry(message: Quoted) -> str:
    lines = [message.text.strip()] if message.text.strip() else []
    if message.files:
        lines.append(f"[shared {_plural(len(message.files), 'file')}, not read: {', '.join(message.files)}]")
    if not lines:
        return ""
    speaker = YOURS if message.yours else speaker_line(message.author_id, message.author_name)
    return "\n".join([speaker, *lines])


def _fit(entries: list[str], budget: int) -> tuple[list[str], int]:
    """The first entry and as many of the latest as fit in `budget` characters; how many were left out."""
    if sum(len(e) + 2 for e in entries) <= budget:
        return list(entries), 0
    first = entries[0] if len(entries[0]) <= budget // 2 else entries[0][: budget // 2] + "…"
    latest, used = [], len(first) + 200  # room for the note of what was left out
    for entry in reversed(entries[1:]):
        if used + len(entry) + 2 > budget:
            break
        latest.insert(0, entry)
        used += len(entry) + 2
    return [first, *latest], len(entries) - 1 - len(latest)


def _plural(count: int, noun: str) -> str:
    return f"{count} {noun}" if count == 1 else f"{count} {noun}s"
