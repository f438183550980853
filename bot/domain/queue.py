"""The turn queue's rules: which waiting turns form the next batch, when a try is one too many, and
who may hold a session's lease.

Invariants: a turn is answered in one batch with every other turn waiting in its session; a turn
whose answer was begun MAX_ATTEMPTS times without one being recorded fails (its author is owed a
notice) instead of being tried again; a session that is not answerable (a closed fork) fails its
waiting turns without a notice. A lease is held by one owner until it lapses; its holder may take
it again at any time. The stores apply these rules; they do not restate them.
"""
from __future__ import annotations

from collections.abc import Collection, Sequence
from dataclasses import dataclass, field
from datetime import datetime, timedelta
from typing import Any, NamedTuple

from .conditions import Before, Both, Condition, Either, Is, Missing, NotAfter, NotBefore, OneOf
from .model import ForkStatus, Session, Turn, TurnStatus

MAX_ATTEMPTS = 3  # answers begun for one turn, merges for one fork, replays of one delivery, before giving up

IN_FLIGHT = (TurnStatus.PENDING, TurnStatus.STREAMING)  # a turn being answered, or waiting to be: no merge yet
RETRYABLE = TurnStatus.FAILED  # a turn a person may ask to be answered again (its attempts start afresh)


def reply_status(stopped: bool, stop_reason: str | None) -> TurnStatus:
    """How an answer is kept: stopped by a person, declined by Claude (it and its turns leave the context), or
    complete (a cut one too: max_tokens and model_context_window_exceeded keep what was written)."""
    if stopped:
        return TurnStatus.STOPPED
    return TurnStatus.DECLINED if stop_reason == "refusal" else TurnStatus.COMPLETE


def one_too_many(attempt: int) -> bool:
    """Whether the `attempt`-th try (counting this one) is past the limit: give up instead.

    >>> one_too_many(MAX_ATTEMPTS), one_too_many(MAX_ATTEMPTS + 1)
    (False, True)
    """
    return attempt > MAX_ATTEMPTS


class Waiting(NamedTuple):
    """A pending turn and how many answers to it were begun so far."""

    turn: Turn
    attempts: int


@dataclass(frozen=True)
class NextBatch:
    """What the lease holder does next: answer `answer` (each counted as one more attempt), fail
    `failed` (the given up and those a closed session refuses), and tell the authors of `given_up`.
    With nothing to answer, the lease is released."""

    answer: list[Turn]
    failed: list[Turn] = field(default_factory=list)
    given_up: list[Turn] = field(default_factory=list)

    @property
    def release(self) -> bool:
        return not self.answer


def next_batch(waiting: Sequence[Waiting], session: Session) -> NextBatch:
    """The next batch from a session's pending turns (in seq order)."""
    given_up = [w.turn for w in waiting if one_too_many(w.attempts + 1)]
    answer = [w.turn for w in waiting if not one_too_many(w.attempts + 1)]
    if answer and not session.answerable:
        return NextBatch([], answer + given_up, given_up)
    return NextBatch(answer, given_up, given_up)


def lease_until(now: datetime, seconds: float) -> datetime:
    """When a lease taken or renewed now lapses."""
    return now + timedelta(seconds=seconds)


def lease_lapsed(now: Any) -> Condition:
    """Nobody holds the session's lease (none was taken, or it lapsed)."""
    return Either((Missing("lease_until"), Before("lease_until", now)))


def lease_held(now: Any) -> Condition:
    """Someone holds the session's lease now (a live holder's heartbeat renews it; a dead one's lapses)."""
    return NotBefore("lease_until", now)


def being_opened(now: Any) -> Condition:
    """A fork whose opener is alive and has not recorded its root's ts yet (Slack may already show the root)."""
    return Both((Is("kind", "fork"), Is("status", ForkStatus.OPEN), Missing("root_ts"), lease_held(now)))


def stalled_turn(created_before: Any) -> Condition:
    """A turn that shows its session needs answering: a reply being streamed, or a turn waiting since
    before `created_before`. With the session's lease lapsed, nobody is answering it."""
    return Either((Is("status", TurnStatus.STREAMING),
                   Both((Is("status", TurnStatus.PENDING), NotAfter("created_at", created_before)))))


def lease_takeable(owner: Any, now: Any) -> Condition:
    """`owner` may take the session's lease: nobody holds it, or `owner` already does."""
    return Either((Missing("lease_until"), Before("lease_until", now), held_by(owner)))


def held_by(owner: Any) -> Condition:
    """`owner` holds the lease (renewing or releasing it needs this)."""
    return Is("lease_owner", owner)


def held_by_any(owners: Collection[str]) -> Condition:
    """The leases these processes hold (their heartbeat renews them; a clean exit releases them)."""
    return OneOf("lease_owner", tuple(owners))
