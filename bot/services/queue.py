"""The turn queue's use cases, each one unit of work over the store's repositories: a user's turn handed in
(stored once, the session leased), the lease holder's next batch, its answer recorded or given up.

Each use case that hands the holder work finds the next batch in its own unit of work, and finding none
releases the lease there too: a turn submitted meanwhile is either in the batch or finds the lease free.
Which turns form a batch and what an attempt counts is the domain's (bot/domain/queue.py: next_batch). A channel
conversation's batch carries what its request reads of the store — its history and the channel's memory — read in
that unit too (one transaction: on PostgreSQL three round trips fewer than a read of its own after it).
"""
from __future__ import annotations

from collections.abc import Mapping, Sequence

from ..domain.model import Attachment, Channel, Turn, TurnStatus, Usage
from ..domain.queue import next_batch, reply_status
from ..domain.spend import Reservation
from .ports import Batch, Claims, ConnectorUse, Held, Inbox, Leases, Memories, Spending, Submitted, TurnQueue, Work


class Queue:
    def __init__(self, *, work: Work, claims: Claims, inbox: Inbox, turns: TurnQueue, leases: Leases,
                 spending: Spending, connector_use: ConnectorUse, memories: Memories):
        self.work, self.claims, self.inbox, self.spending, self.memories = work, claims, inbox, spending, memories
        self.connector_use = connector_use
        self.turns, self.leases = turns, leases

    def submit(self, session_id: int, text: str, *, author_id: str, author_name: str | None,
               slack_ts: str | None, channel: Channel | None, claim: str | None, owner: str,
               lease_seconds: float, attachments: Sequence[Attachment] = (),
               delivery: str | None = None) -> Submitted:
        """Store a user's turn as pending (once per `claim`) and try to lease the session for `owner`: its first
        batch when the lease was free. With `channel`, the ts is indexed. With `delivery`, the kept delivery the
        turn came in is done in the same unit of work: from then on the stored turn is what is kept."""
        with self.work():
            if claim and not self.claims.claim(claim):
                return Submitted(stored=False)
            if delivery:
                self.inbox.done(delivery)
            held = self.turns.enqueue(session_id, text, author_id=author_id, author_name=author_name,
                                      slack_ts=slack_ts, channel=channel, owner=owner, lease_seconds=lease_seconds,
                                      attachments=attachments)
            return Submitted(stored=True, batch=self._next(held, owner) if held else None)

    def next(self, session_id: int, owner: str, lease_seconds: float) -> Batch | None:
        """For the lease holder: the waiting turns with their reply's place saved and the lease renewed; or, when
        none wait, the lease released (None; also None when the lease was lost)."""
        with self.work():
            held = self.leases.renew(session_id, owner, lease_seconds)
            return None if held is None else self._next(held, owner)

    def record(self, reply: Turn, pending: Sequence[Turn], text: str, usage: Usage, posted: Sequence[str],
               channel: Channel | None, owner: str, lease_seconds: float, stopped: bool = False,
               stop_reason: str | None = None, reservation: Reservation | None = None,
               connector_calls: Mapping[str, int] | None = None) -> Batch | None:
        """Store the answer and mark its turns answered — a `refusal` marks the answer and its turns DECLINED, out of
        every later request —, its cost added to its channel's day and its `reservation` settled; then the holder's
        next batch. A holder whose lease was lost (taken over) records nothing and gets None. `stopped`: a person
        stopped it, and what it said so far is its answer. `connector_calls`: its MCP calls per connector, counted
        with it (so whoever sees the answer recorded sees them too)."""
        with self.work():
            held = self.leases.renew(reply.session_id, owner, lease_seconds)
            if held is None:
                self._give_back(reservation)
                return None
            status = reply_status(stopped, stop_reason)
            self.turns.finish_reply(reply, text, usage, status, posted, channel, stop_reason)
            self.turns.settle(pending, TurnStatus.DECLINED if status is TurnStatus.DECLINED else TurnStatus.ANSWERED)
            session = held.session
            if connector_calls:
                self.connector_use.record(session.channel, session.fork.number if session.fork else 0, connector_calls)
            following = self._next(held, owner)
            self.spending.add(held.session.home, usage, held.session.fork is not None)  # last: its day's row stays locked
            self._give_back(reservation)  # settled: the real cost replaces the worst case
            return following

    def abort(self, reply: Turn, pending: Sequence[Turn], owner: str, lease_seconds: float,
              reservation: Reservation | None = None) -> Batch | None:
        """The call failed (or was never made): the answer leaves the context, its turns stay, failed, its
        `reservation` is released; then the next batch."""
        with self.work():
            held = self.leases.renew(reply.session_id, owner, lease_seconds)
            self._give_back(reservation)
            if held is None:
                return None
            self.turns.abort_reply(reply)
            self.turns.settle(pending, TurnStatus.FAILED)
            return self._next(held, owner)

    def _next(self, held: Held, owner: str) -> Batch | None:
        session = held.session
        decided = next_batch(self.turns.waiting(session.id), session)
        self.turns.settle(decided.failed, TurnStatus.FAILED)
        if decided.release:
            self.leases.release(session.id, owner)
            return Batch(session, [], None, [], decided.given_up) if decided.given_up else None
        reply = self.turns.start_reply(held, decided.answer)
        # a channel's memory read here, in the same transaction as its history, not in one of its own after it
        memory = self.memories.seen_in(session.channel) if session.fork is None else None
        return Batch(session, decided.answer, reply, self.turns.history(held), decided.given_up, memory)

    def _give_back(self, reservation: Reservation | None) -> None:
        if reservation is not None:
            self.spending.release(reservation)
