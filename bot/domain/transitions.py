"""The fork's state machine and its review drafts, as moves (invariants 7 and 11).

A fork moves open → merging → merged, merging → open (a failed or given-up merge), or
open → abandoned. A merge is asked for (open → merging) and then taken by whoever may carry it out: not
while an answer is in flight in the fork (invariant 13), so it is carried out by whoever records that
answer, or by the sweep. A draft under review is claimed, recorded, dropped or approved (open → merging)
only while the fork is open and the draft is the one the person saw. Each move names the states it
may start from, what else must hold, and what it changes; the store makes it as one conditional
UPDATE (the memory store under its lock), so whatever arrives twice moves the fork once.
The merge claim (merge_owner, merge_until) is also how a draft's writing is claimed.
"""
from __future__ import annotations

from collections.abc import Collection, Mapping
from dataclasses import dataclass, field
from datetime import datetime, timedelta
from typing import Any

from .conditions import Before, Both, Condition, Either, Is, Missing, NotAfter, OneOf, Plus, Present
from .model import ForkStatus, Usage
from .queue import lease_lapsed, lease_until

OPEN, MERGING, MERGED, ABANDONED = ForkStatus.OPEN, ForkStatus.MERGING, ForkStatus.MERGED, ForkStatus.ABANDONED
MERGEABLE_FROM = (OPEN,)  # a merge, direct or approved, starts only from an open fork
UNFINISHED = (OPEN, MERGING)  # a child fork in these states keeps its parent fork from closing


@dataclass(frozen=True)
class Move:
    """A conditional change of one fork's row: made only from `source` (None: any state) when every
    condition in `when` holds; `target` None leaves the state as it is."""

    source: tuple[ForkStatus, ...] | None
    target: ForkStatus | None = None
    when: tuple[Condition, ...] = ()
    changes: Mapping[str, Any] = field(default_factory=dict)

    @property
    def conditions(self) -> tuple[Condition, ...]:
        return ((OneOf("status", self.source),) if self.source is not None else ()) + self.when

    @property
    def values(self) -> dict[str, Any]:
        return {**self.changes, **({"status": self.target} if self.target is not None else {})}


def idle_since(idle_before: datetime | None) -> tuple[Condition, ...]:
    """A move made because the fork sat idle is made only if it still has."""
    return (NotAfter("last_activity_at", idle_before),) if idle_before else ()


def no_live_claim(now: datetime) -> tuple[Condition, ...]:
    """Nobody's claim on the fork is alive (a merge, or a draft of its summary being written): one
    summary request at a time per fork, merged or drafted."""
    return (Either((Missing("merge_until"), Before("merge_until", now))),)


def request_merge(user_id: str, guidance: str, now: datetime, idle_before: datetime | None = None) -> Move:
    """open → merging, claimed by nobody yet, unless a live claim holds the fork (no_live_claim): whoever
    may carry it out takes it (take_merge) — at once when nothing is being answered, else whoever records
    the answer in flight, or the sweep. A live draft is dropped: the direct merge replaces it."""
    return Move(MERGEABLE_FROM, MERGING, idle_since(idle_before) + no_live_claim(now),
                {"merged_by": user_id, "merge_guidance": guidance or None, "merge_owner": None,
                 "merge_until": None, "merge_attempts": 0, "draft_text": None})


def cancel_merge() -> Move:
    return Move((MERGING,), OPEN, changes={"merged_by": None, "merge_until": None, "merge_owner": None,
                                           "merge_guidance": None})


def abandon(now: datetime, idle_before: datetime | None = None) -> Move:
    return Move((OPEN,), ABANDONED, idle_since(idle_before), {"draft_text": None, "closed_at": now})


def complete_merge(summary: str, usage: Usage, now: datetime) -> Move:
    """The summary enters the parent in the same transaction; a review ends with the merge."""
    return Move((MERGING,), MERGED, changes={"summary": summary, "summary_tokens": usage.output_tokens,
                                             "draft_text": None, "closed_at": now})


def announced(ts: str) -> Move:
    """The merged summary was posted: the merge claim ends."""
    return Move(None, changes={"summary_ts": ts, "merge_until": None, "merge_owner": None})


def stuck_merge(now: datetime) -> tuple[Condition, ...]:
    """A merge nobody is carrying out while nothing is being answered in the fork: asked for and not yet
    taken, or whose claim lapsed before it was written or before its summary was posted. (The store also
    requires that none of the fork's turns is in flight: bot/domain/queue.IN_FLIGHT.)"""
    unclaimed = Either((Missing("merge_until"), Before("merge_until", now)))
    return (lease_lapsed(now),
            Either((Both((Is("status", MERGING), unclaimed)),
                    Both((Is("status", MERGED), Missing("summary_ts"), Before("merge_until", now))))))


def take_merge(owner: str, now: datetime, seconds: float) -> Move:
    """Take a merge nobody is carrying out (stuck_merge), counting one more attempt: one holder at a time,
    and only once the fork's answer in flight is recorded (invariant 13)."""
    return Move((MERGING, MERGED), None, stuck_merge(now),
                {"merge_until": lease_until(now, seconds), "merge_owner": owner, "merge_attempts": Plus(1)})


def give_up_merge() -> tuple[Move, Move]:
    """After too many attempts: a merge still being written reopens the fork; the claim ends either way."""
    return (Move((MERGING,), OPEN, changes={"merged_by": None, "merge_guidance": None}),
            Move(None, changes={"merge_until": None, "merge_owner": None, "merge_attempts": 0}))


def claims_of(owners: Collection[str]) -> tuple[Condition, ...]:
    """The live merge and draft claims these processes hold."""
    return OneOf("merge_owner", tuple(owners)), Present("merge_until")


def renewed_claim(now: datetime, seconds: float) -> dict[str, Any]:
    return {"merge_until": lease_until(now, seconds)}


def released_claim(now: datetime) -> dict[str, Any]:
    """A released claim lapses at once: the next sweep, anywhere, takes the work over."""
    return {"merge_until": now - timedelta(seconds=1), "merge_owner": None}


def idle(idle_before: datetime, unreminded: bool = False) -> tuple[Condition, ...]:
    """An open fork with no activity since `idle_before` (and, if asked, not yet reminded)."""
    return (Is("status", OPEN), NotAfter("last_activity_at", idle_before)) + \
        ((Missing("reminded_at"),) if unreminded else ())


def remind(now: datetime, idle_before: datetime) -> Move:
    """At most one reminder per fork, whichever replica gets there first."""
    return Move((OPEN,), None, (Missing("reminded_at"), NotAfter("last_activity_at", idle_before)),
                {"reminded_at": now})


def begin_draft(seen_number: int, owner: str, now: datetime, seconds: float) -> Move:
    """Claim the writing of the draft after `seen_number`, unless someone's claim is live."""
    return Move((OPEN,), None, (Is("draft_number", seen_number), *no_live_claim(now)),
                {"merge_owner": owner, "merge_until": lease_until(now, seconds)})


def record_draft(number: int, text: str, seq: int, usage: Usage, requested_by: str, owner: str) -> Move:
    """The claimed draft becomes the live one (only by its claimer, only if none came between)."""
    return Move((OPEN,), None, (Is("draft_number", number - 1), Is("merge_owner", owner)),
                {"draft_number": number, "draft_text": text, "draft_seq": seq, "draft_ts": None,
                 "draft_by": requested_by, "merge_owner": None, "merge_until": None,
                 "draft_input_tokens": Plus(usage.prompt_tokens), "draft_output_tokens": Plus(usage.output_tokens)})


def release_draft(owner: str) -> Move:
    return Move((OPEN,), None, (Is("merge_owner", owner),), {"merge_owner": None, "merge_until": None})


def draft_posted(number: int, ts: str) -> Move:
    return Move(None, None, (Is("draft_number", number),), {"draft_ts": ts})


def live_draft(number: int) -> tuple[Condition, ...]:
    """Draft `number` is the fork's live one (a person acts on what they saw, nothing newer)."""
    return Is("draft_number", number), Present("draft_text")


def drop_draft(number: int) -> Move:
    return Move((OPEN,), None, live_draft(number), {"draft_text": None})


def approve(number: int, text: str, user_id: str, edited: bool) -> Move:
    """The approved (possibly edited) draft is merged: open → merging, taken as any merge is (take_merge)."""
    return Move(MERGEABLE_FROM, MERGING, live_draft(number),
                {"draft_text": text, "summary_edited_by": user_id if edited else None, "merged_by": user_id,
                 "merge_owner": None, "merge_attempts": 0, "merge_until": None})
