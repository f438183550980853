"""Slack's agent platform, as Threadfork's rules see it (pure: no Slack, no I/O).

- Every fork's thread is an agent session (docs.slack.dev/ai/agent-sessions): created with a title —
  its topic, or "Fork #N" until a fork without one gets its first message, whose first line names it
  then — at most TITLE_LIMIT characters, one line, made `inert` like every outside text (no mention, no
  link behind a label). Its status is `processing` while Claude answers in
  it, `active` while it waits for people, `closed` once it is merged or abandoned.
- The agent pane: a person viewing a channel (not a DM) while writing to the bot can fork that channel
  privately. `in_view` picks the channel from what Slack says they are viewing, most relevant first;
  `in_order` makes the event's ts comparable, so a view Slack delivers late never replaces a newer one.
- Suggested prompts: at most MAX_PROMPTS, fitting what the person views.
"""
from __future__ import annotations

import re

from collections.abc import Sequence
from dataclasses import dataclass
from enum import StrEnum

from .model import Fork
from .text import inert

TITLE_LIMIT = 200  # characters of a session's title (agents.sessions.setStatus, agents.sessions.rename)
MAX_PROMPTS = 4  # assistant.threads.setSuggestedPrompts takes up to four


class SessionStatus(StrEnum):
    PROCESSING = "processing"  # Claude is answering: Slack shows its Stop button
    ACTIVE = "active"  # waiting for people
    CLOSED = "closed"  # merged or abandoned


def one_line(text: str, limit: int = TITLE_LIMIT) -> str:
    """The first non-blank line, whitespace folded, shortened with "…" to `limit` characters."""
    line = next((" ".join(part.split()) for part in text.splitlines() if part.strip()), "")
    return line if len(line) <= limit else line[: limit - 1].rstrip() + "…"


def session_title(fork: Fork) -> str:
    """The title a fork's session is created with: `#N topic` (see _numbered)."""
    if fork.private:
        return one_line(_inert(fork.topic)) or "Private fork"
    return _numbered(fork, fork.topic) or f"Fork #{fork.number}"


def first_message_title(fork: Fork, first_message: str) -> str | None:
    """The new title of a fork that had no topic, from its first message (None: it keeps its title)."""
    if fork.topic:
        return None
    return (one_line(_inert(first_message)) if fork.private else _numbered(fork, first_message)) or None


def _numbered(fork: Fork, text: str) -> str:
    """`#N line` within the limit; a line that fits the title whole but not beside its number goes alone
    (a title holds all of a topic that a title can hold), a longer one is cut after the number."""
    text = _inert(text)
    line, number = one_line(text, limit=len(text) + 1), f"#{fork.number} "
    if not line:
        return ""
    if len(number + line) <= TITLE_LIMIT:
        return number + line
    return line if len(line) <= TITLE_LIMIT else number + one_line(line, TITLE_LIMIT - len(number))


def _inert(text: str) -> str:
    """Each line of `text` as a title may show it: no mention, no link behind a label."""
    return "\n".join(inert(line, 2 * len(line) + 16) for line in text.splitlines())


def is_dm(channel_id: str) -> bool:
    return channel_id.startswith("D")


def in_view(channels: Sequence[str]) -> str | None:
    """The channel a person is viewing, from the channels Slack names (most relevant first): the first
    that is a channel, not a direct message."""
    return next((c for c in channels if c and not is_dm(c)), None)


_TS = re.compile(r"[0-9]{1,12}(\.[0-9]{1,6})?")


def in_order(ts: str) -> str:
    """A Slack ts ("1700000000.000200") as text that sorts as the moments do ("" for none): seconds and
    microseconds zero-padded, so "999.5" sorts before "1000.1" as a string, in any database."""
    if not isinstance(ts, str) or not _TS.fullmatch(ts):
        return ""
    seconds, _, fraction = ts.partition(".")
    return f"{int(seconds):012d}.{fraction:0<6}"


@dataclass(frozen=True)
class Prompt:
    title: str  # what the person sees
    message: str  # what is sent as their message when they pick it


def suggested_prompts(channel_id: str | None, name: str | None) -> list[Prompt]:
    """What to suggest in the bot's DM: with a channel in view, exploring it privately and what it has
    decided (both answered in a private fork of it: its merged summaries are in its conversation)."""
    if channel_id:
        shown = f"#{name}" if name else "this channel"
        return [
            Prompt(f"Explore {shown} privately",
                   f"Let's explore <#{channel_id}> privately: start from its conversation so far."),
            Prompt(f"What has {shown} decided?",
                   f"Going by the merged fork summaries in <#{channel_id}>'s conversation: what has it decided, "
                   "and what is still open?"),
            Prompt("How do private forks work?",
                   "How do private forks work, and what reaches the channel when I merge one?"),
        ][:MAX_PROMPTS]
    return [
        Prompt("What can you do?", "What can you do, and how do forks work?"),
        Prompt("Fork a channel privately",
               "How do I explore a channel's conversation privately and share only a summary?"),
    ]
