"""Merge rules (invariants 5 and 7).

A fork moves open → merging → merged, or open → abandoned (bot/domain/transitions.py); the store
makes each move as one conditional update, so a fork is merged at most once whatever arrives twice. The summary is one
more turn on the fork's own history, asked for by `merge_prompt`.
"""
from __future__ import annotations

import re
from dataclasses import dataclass

from .errors import ForkClosed
from .model import Fork, ForkStatus
from .transitions import MERGEABLE_FROM

EXPIRY_ACTOR = "threadfork:expiry"  # who merged or abandoned a fork closed because it sat idle

MERGE_PROMPT = (
    "[Merge request] This thread is being merged back into the channel's main conversation. "
    "Write the summary that will be posted there and added to its context; the thread itself "
    "will not be visible to the main conversation. Use these sections, omitting any that are empty:\n"
    "1. Outcome / decision\n"
    "2. Rationale\n"
    "3. Rejected options and why\n"
    "4. Constraints people stated (quote them verbatim, with who said them)\n"
    "5. Open questions\n"
    "6. Artifacts (code and exact values verbatim, in fenced blocks; the web sources relied on, as links)\n"
    "7. Next actions (with owners where known)\n"
    "8. Worth remembering: at most five lines, each `- ` and one short self-contained fact, decision or "
    "convention the channel should keep knowing after this thread is gone (people may add them to the "
    "channel's lasting memory)\n"
    "Be complete but concise; do not add a preamble."
)


@dataclass(frozen=True)
class MergedSummary:
    """A summary already merged into a parent: what a later merge into it may contradict."""

    fork_number: int
    text: str  # as the parent's context holds it


def merge_prompt(requested_by: str, guidance: str) -> str:
    text = f"{MERGE_PROMPT}\nMerge requested by <@{requested_by}>."
    if guidance:
        text += f"\nTheir guidance for the summary: {guidance}"
    return text


def summary_turn_text(fork: Fork, merged_by: str, summary: str, edited_by: str | None = None) -> str:
    """How a merged fork appears in the parent's context; stored once, never re-rendered."""
    edited = f", summary edited by <@{edited_by}>" if edited_by else ""
    if fork.private:  # its topic and number are its owner's DM's: neither is shared with the channel
        return (f"[Merged a private fork of <@{fork.owner_id}> ({fork.mode} mode), approved by <@{merged_by}>"
                f"{edited}. Summary of that side session:]\n{summary}")
    topic = f" about “{fork.topic}”" if fork.topic else ""
    kind = "fork" if not fork.nested else "fork of this fork"
    return (
        f"[Merged {kind} #{fork.number}{topic} ({fork.mode} mode), merged by <@{merged_by}>{edited}. "
        f"Summary of that side thread:]\n{summary}"
    )


def ensure_mergeable(fork: Fork) -> None:
    if fork.status not in MERGEABLE_FROM:
        raise ForkClosed(closed_reason(fork))


def closed_reason(fork: Fork) -> str:
    if fork.status is ForkStatus.MERGED:
        return f"Fork {fork.label} is already merged."
    if fork.merge_waiting:
        return f"Fork {fork.label} is already being merged: its summary follows as soon as Claude finishes its answer."
    if fork.status is ForkStatus.MERGING:
        return f"Fork {fork.label} is being merged right now."
    if fork.status is ForkStatus.ABANDONED:
        return f"Fork {fork.label} was abandoned."
    return f"Fork {fork.label} is open."


CONFLICTS_HEADING = re.compile(r"^\s*(?:#{1,6}\s*)?(?:\*\*|__)?\s*Conflicts\s*(?:\*\*|__)?\s*:?\s*$", re.IGNORECASE)
_NEXT_HEADING = re.compile(r"^\s*(?:#{1,6}\s+\S|(?:\*\*|__)[^*_]+(?:\*\*|__)\s*:?\s*$)")
_ITEM = re.compile(r"^\s*(?:[-*•]|\d+[.)])?\s*(?:⚠️\s*)?(?:conflicts? with\s+)?fork\s*#(\d+)\s*[:—–-]+\s*(.+)$",
                   re.IGNORECASE)
_NONE = re.compile(r"^\s*(?:[-*•]\s*)?(?:none|no conflicts?|nothing)\b", re.IGNORECASE)
CONFLICT_MARK = "⚠️ Conflicts with fork #"


def conflicts_request(newer: list[MergedSummary]) -> str:
    """What a merge request adds when other forks were merged into the same parent since this fork
    began: their summaries, and the ask to name contradictions under a `Conflicts` heading."""
    shown = "\n\n".join(f"--- Fork #{s.fork_number} ---\n{s.text}" for s in newer)
    return (
        "\n\n[Since this fork began, these other forks were merged into the same conversation; this thread "
        f"has not seen them:]\n{shown}\n\n"
        "If any decision or conclusion of this fork contradicts one of them, end the summary with a section "
        "headed exactly `Conflicts`, one line per contradiction, each naming the other fork: "
        "`- Fork #N: what this fork concluded, against what fork #N concluded`. "
        "Leave the section out when nothing contradicts."
    )


def mark_conflicts(summary: str) -> str:
    """The summary with its `Conflicts` section rewritten as one ⚠️ line per conflict, at the end:
    how the merge post shows it (a section of its own) and how the parent's context keeps it."""
    lines = summary.splitlines()
    start = next((i for i, line in enumerate(lines) if CONFLICTS_HEADING.match(line)), None)
    if start is None:
        return summary
    end = next((i for i in range(start + 1, len(lines)) if _NEXT_HEADING.match(lines[i])), len(lines))
    conflicts = []
    for line in lines[start + 1:end]:
        item = _ITEM.match(line)
        if item:
            conflicts.append(f"{CONFLICT_MARK}{item.group(1)}: {item.group(2).strip()}")
        elif line.strip() and not _NONE.match(line):
            conflicts.append(f"⚠️ Conflict: {line.strip().lstrip('-*• ').strip()}")
    body = "\n".join(lines[:start] + lines[end:]).rstrip()
    return f"{body}\n\n" + "\n".join(conflicts) if conflicts else body


def split_conflicts(summary: str) -> tuple[str, list[str]]:
    """A marked summary's body and its ⚠️ conflict lines (none for a summary without conflicts)."""
    lines = summary.rstrip().splitlines()
    cut = len(lines)
    while cut and lines[cut - 1].startswith("⚠️ Conflict"):
        cut -= 1
    return "\n".join(lines[:cut]).rstrip(), lines[cut:]


REMEMBER_HEADING = re.compile(r"^\s*(?:#{1,6}\s*)?(?:\*\*|__)?\s*(?:\d+[.)]\s*)?(?:\*\*|__)?\s*Worth remembering\s*:?"
                              r"\s*(?:\*\*|__)?\s*:?\s*$", re.IGNORECASE)
_REMEMBER_ITEM = re.compile(r"^\s*(?:[-*•]|\d+[.)])\s+(.+)$")
MAX_REMEMBERED = 5


def worth_remembering(summary: str) -> list[str]:
    """The conclusions a summary offers for the channel's memory: the items of its `Worth remembering` section
    (at most MAX_REMEMBERED, each one line), in order; none without the section."""
    lines = summary.splitlines()
    start = next((i for i, line in enumerate(lines) if REMEMBER_HEADING.match(line)), None)
    if start is None:
        return []
    items: list[str] = []
    for line in lines[start + 1:]:
        if _NEXT_HEADING.match(line) or CONFLICTS_HEADING.match(line) or line.startswith("⚠️ Conflict"):
            break
        item = _REMEMBER_ITEM.match(line)
        if item and not _NONE.match(line):
            items.append(" ".join(item.group(1).split()).strip("*_ "))
        elif items and not line.strip():
            continue
    return [item for item in items if item][:MAX_REMEMBERED]
