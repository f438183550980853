"""Merge rules (invariants 5 and 7).

A fork moves open → merging → merged, or open → abandoned. The store performs each move as one
conditional update, so a fork is merged at most once whatever arrives twice. The summary is one
more turn on the fork's own history, asked for by `merge_prompt`.
"""
from __future__ import annotations

from .errors import ForkClosed
from .model import Fork, ForkStatus

MERGEABLE_FROM = (ForkStatus.OPEN,)
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
    "Be complete but concise; do not add a preamble."
)


def merge_prompt(requested_by: str, guidance: str) -> str:
    text = f"{MERGE_PROMPT}\nMerge requested by <@{requested_by}>."
    if guidance:
        text += f"\nTheir guidance for the summary: {guidance}"
    return text


def summary_turn_text(fork: Fork, merged_by: str, summary: str) -> str:
    """How a merged fork appears in the parent's context; stored once, never re-rendered."""
    topic = f" about “{fork.topic}”" if fork.topic else ""
    return (
        f"[Merged fork #{fork.number}{topic} ({fork.mode} mode), merged by <@{merged_by}>. "
        f"Summary of that side thread:]\n{summary}"
    )


def ensure_mergeable(fork: Fork) -> None:
    if fork.status not in MERGEABLE_FROM:
        raise ForkClosed(closed_reason(fork))


def closed_reason(fork: Fork) -> str:
    if fork.status is ForkStatus.MERGED:
        return f"Fork {fork.label} is already merged."
    if fork.status is ForkStatus.MERGING:
        return f"Fork {fork.label} is being merged right now."
    if fork.status is ForkStatus.ABANDONED:
        return f"Fork {fork.label} was abandoned."
    return f"Fork {fork.label} is open."
