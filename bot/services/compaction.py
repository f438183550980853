"""Compaction: when a session's context passes its budget, its oldest turns are replaced by one
summary turn (one model request of its own); the recent turns stay verbatim.

The compaction turn is appended, never edited in: earlier turns stay stored, so a fork opened
before the compaction still resolves its fork point to exactly what it inherited.
"""
from __future__ import annotations

import logging

from ..domain.context import compaction_input, estimate_tokens, in_context
from ..domain.model import Role, Turn, TurnStatus
from .policy import Policy
from .ports import Claims, Model, Sessions, Spending, TurnQueue, Upkeep, Work

log = logging.getLogger(__name__)

RECENT_SHARE = 0.25  # of the budget kept verbatim at the end
MIN_RECENT_TURNS = 2


class Compactor:
    def __init__(self, model: Model, policy: Policy,
                 *, work: Work, claims: Claims, sessions: Sessions, turns: TurnQueue, upkeep: Upkeep,
                 spending: Spending):
        self.work, self.claims, self.sessions, self.turns, self.upkeep = work, claims, sessions, turns, upkeep
        self.spending = spending
        self.model = model
        self.policy = policy

    def sweep(self) -> None:
        for session_id in self.upkeep.sessions_over(self.policy.compact_at):
            self.compact(session_id)

    def if_full(self, session_id: int, tokens: int) -> None:
        """After an answer of `tokens` in context: compacted once it reaches THREADFORK_COMPACT_AT."""
        if tokens >= self.policy.compact_at:
            self.compact(session_id)

    def compact(self, session_id: int) -> Turn | None:
        older = self._older_turns(in_context(self.turns.turns(session_id)))
        if not older:
            return None
        covers = older[-1].seq
        if not self.claims.mark(f"compact:{session_id}:{covers}"):
            return None
        completion = self.model.complete(compaction_input(older, self.policy.cache_ttl))
        if not completion.text.strip():  # an empty summary would stand in for the turns and erase them
            log.warning("compaction of session %s up to turn %s returned nothing; kept the turns", session_id, covers)
            return None
        log.info("compacted session %s up to turn %s into %s tokens", session_id, covers,
                 completion.usage.output_tokens)
        with self.work():  # the compaction and its cost, counted in the session's channel (a private fork's: its home)
            turn = self.turns.append_turn(session_id, Role.COMPACTION, completion.text, TurnStatus.COMPLETE,
                                          usage=completion.usage, covers_seq=covers)
            session = self.sessions.session(session_id)
            self.spending.add(session.home, completion.usage, in_fork=session.fork is not None)
            return turn

    def _older_turns(self, visible: list[Turn]) -> list[Turn]:
        """What the model sees minus a recent tail worth RECENT_SHARE of the budget (at least
        MIN_RECENT_TURNS); empty when nothing new would be compacted. Text-length estimates are
        scaled to the size the API last reported, so the tail is measured in real tokens."""
        budget = self.policy.compact_at * RECENT_SHARE
        scale = _scale(visible)
        kept, tail = 0.0, 0
        for turn in reversed(visible):
            if turn.role is Role.COMPACTION:
                break
            size = estimate_tokens(turn.text) * scale
            if tail >= MIN_RECENT_TURNS and kept + size > budget:
                break
            kept += size
            tail += 1
        older = visible[: len(visible) - tail]
        return older if any(t.role is not Role.COMPACTION for t in older) else []


def _scale(visible: list[Turn]) -> float:
    reported = next((t.usage.total for t in reversed(visible) if t.role is Role.ASSISTANT and t.usage.total), 0)
    estimated = sum(estimate_tokens(t.text) for t in visible) or 1
    return max(1.0, reported / estimated)
