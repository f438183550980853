"""Acknowledged means kept: a delivery worth keeping (a person's message, a command, a ✅, a button,
a shortcut) is recorded in the durable inbox before Slack gets its acknowledgement, processed, then
marked done. A redelivery of something kept is turned away at the door (Slack's retries, a replayed
request); one whose process died is replayed by the sweep once its claim expires; one that failed
MAX_ATTEMPTS times ends with a notice to its sender. What cannot be recorded at all is not
acknowledged, so Slack delivers it again (the Slack adapter decides how each kind is refused).
"""
from __future__ import annotations

import logging
from datetime import timedelta
from typing import Protocol

from ..domain.queue import one_too_many
from ..infrastructure import metrics
from .liveness import Liveness
from ..domain.model import Channel
from .ports import MAX_ATTEMPTS, Claims, Clock, Inbox, Standing

log = logging.getLogger(__name__)

KEPT_FOR = timedelta(days=1)  # how long done deliveries and claims turn redeliveries away


class Deliveries(Protocol):
    """The Slack side of replaying a kept delivery."""

    def replay(self, key: str, payload: str) -> None:
        """Process it again, as when Slack first delivered it (marking it done when finished)."""

    def give_up(self, payload: str) -> None:
        """Tell its sender, privately and in one sentence, that it could not be processed."""


class Intake:
    def __init__(self, liveness: Liveness, deliveries: Deliveries | None = None,
                 *, claims: Claims, inbox: Inbox, clock: Clock):
        self.claims, self.inbox, self.clock = claims, inbox, clock
        self.liveness = liveness
        self.deliveries = deliveries  # None without Slack (unit tests, the eval): nothing to replay

    def first_delivery(self, event_id: str) -> bool:
        """True once per Slack event id, whichever replica sees it first."""
        return self.claims.claim(f"event:{event_id}")

    def keep(self, key: str, payload: str) -> bool:
        """Record a delivery before it is acknowledged; False: it was kept before (a redelivery).
        Raises when the store cannot record it."""
        kept = self.inbox.keep(key, payload, self.liveness.ttl)
        if kept:
            metrics.DELIVERIES.labels("kept").inc()
            self.liveness.hold("delivery", key)
        return kept

    def keep_turn(self, key: str, payload: str, channel: Channel) -> Standing | None:
        """`keep` for a message that may be a turn in `channel`, reading in the same write what its turn reads of
        the channel (its settings, month, session: a read transaction fewer per turn); None: kept before."""
        standing = self.inbox.keep_and_read(key, payload, self.liveness.ttl, channel)
        if standing is not None:
            metrics.DELIVERIES.labels("kept").inc()
            self.liveness.hold("delivery", key)
        return standing

    def done(self, key: str) -> None:
        """Processed. A delivery this process no longer holds was finished already (its turn stored it
        done: Conversation.submit), so nothing is written again."""
        if self.liveness.holds("delivery", key):
            self.liveness.let_go("delivery", key)
            self.inbox.done(key)
            metrics.DELIVERIES.labels("done").inc()

    def replay_due(self) -> None:
        """Sweep step: deliveries whose process died before finishing them."""
        if self.deliveries is None:
            return
        for key in self.inbox.due():
            kept = self.inbox.take(key, self.liveness.ttl)
            if kept is None:
                continue  # another sweeper took it
            metrics.TAKEOVERS.labels("delivery").inc()
            self.liveness.hold("delivery", key)  # until the replay is done (Deliveries.replay marks it)
            try:
                if one_too_many(kept.attempts):
                    log.warning("delivery %s failed %s times; giving up", key, MAX_ATTEMPTS)
                    self.deliveries.give_up(kept.payload)
                    self.done(key)
                else:
                    log.info("replaying delivery %s (attempt %s)", key, kept.attempts)
                    self.deliveries.replay(key, kept.payload)
            except Exception:
                log.exception("replaying delivery %s failed; it will be tried again", key)
                self.failed(key)

    def failed(self, key: str) -> None:
        """Processing raised: stop renewing its claim, so a sweep replays it once the claim expires."""
        self.liveness.let_go("delivery", key)

    def prune(self) -> None:
        """Sweep step: forget claims and finished deliveries older than a day."""
        before = self.clock() - KEPT_FOR
        self.claims.prune(before)
        self.inbox.prune(before)
