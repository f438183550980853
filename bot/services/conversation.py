"""Turns in and replies out, for parents and forks alike.

A user turn is stored as pending, and the session leased, in one transaction; whoever holds the
lease answers every pending turn, in order, one model call per batch, and releases the lease in
the same transaction that finds nothing more waiting. A message that arrives while
Claude is answering is kept and answered next (with full context), never dropped or doubled,
across threads and replicas. A failed call leaves the user's turn stored and marked failed.

A fork's merge asked for while Claude answers there waits for every answer waiting to be recorded; the
holder then carries it out (`on_released`), after the answer's own follow-ups.

Before each model call the batch's worst case is set aside against its channel's monthly cap (access.py:
`admit`) and settled to the real cost in the write that records the answer (released when the call fails or
never happens); at the cap the batch's turns are kept unanswered and their authors told privately.

A person may stop an answer being written (liveness.py: Stopping): what it said so far is its answer, marked as
stopped by them, in Slack and in every later request. A fork's agent session is `processing` while it
answers and `active` after (off the answer's path: the calls never wait, never fail it).
"""
from __future__ import annotations

import logging
import time
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass

from ..domain.agent import SessionStatus, first_message_title
from ..domain.caching import CacheMode
from ..domain.errors import CapReached, ChatUnavailable, ModelUnavailable
from ..domain.model import Attachment, Role, Session, Usage
from ..domain.settings import ChannelSettings
from ..domain.sources import sources_section
from ..domain.spend import Reservation
from ..domain.stops import CONTEXT_FULL, CONTINUE_PROMPT, REFIT_PROMPT, continuable, stop_note
from ..domain.text import inert
from ..infrastructure import metrics
from .access import SpendCaps
from .budgets import Budgets
from .compaction import Compactor
from .model_inputs import Connections
from .liveness import Liveness, Stopping
from .model_inputs import ModelInputs
from .ports import (MAX_ATTEMPTS, AgentSessions, Audience, Batch, Completion, Model, Opener, Place,
                    PrivateAnswers, Replies, Spending, Leases)
from .queue import Queue
from .model_inputs import MemoryTools

log = logging.getLogger(__name__)


@dataclass(frozen=True)
class Speaker:
    user_id: str
    name: str | None


OnReleased = Callable[[Session], None]  # every answer waiting there recorded, the lease let go


class Conversation:
    def __init__(self, inputs: ModelInputs, replies: Replies, answers: PrivateAnswers, model: Model,
                 liveness: Liveness, stopping: Stopping,
                 budgets: Budgets | None = None, connections: Connections | None = None,
                 agent: AgentSessions | None = None,
                 cache: CacheMode = CacheMode.AUTO, on_released: OnReleased | None = None,
                 compactor: Compactor | None = None, caps: SpendCaps | None = None,
                 memory_tools: MemoryTools | None = None,
                 *, queue: Queue, leases: Leases, spending: Spending):
        self.memory_tools = memory_tools  # Claude's memory tool, where a channel allows it
        self.liveness = liveness
        self.lease = liveness.ttl
        self.queue = queue  # the queue's use cases, each one unit of work (queue.py)
        self.leases, self.spending = leases, spending
        self.inputs = inputs  # the fork chain is read through its sessions
        self.replies = replies
        self.answers = answers
        self.model = model
        self.budgets = budgets  # after the lease is released (nobody waits): a fork at its budget is told
        self.on_released = on_released  # then this: a fork's merge that waited for its answers goes ahead
        self.connections = connections
        self.stopping = stopping
        self.agent = agent
        self.cache = cache  # THREADFORK_CACHE_TTL
        self.compactor = compactor  # a context over THREADFORK_COMPACT_AT (or a full window) is compacted
        self.caps = caps  # each model call reserves its worst case against its channel's monthly cap

    def submit(self, session: Session, speaker: Speaker, text: str, slack_ts: str | None,
               claim: str | None = None, attachments: Sequence[Attachment] = (),
               on_stored: Callable[[], None] | None = None, chosen: ChannelSettings | None = None,
               delivery: str | None = None) -> Usage:
        """Store the turn (once per `claim` key) and answer it, unless someone already is; `on_stored`
        runs once the turn is stored, before any answer (not for a duplicate). `chosen`: the channel's
        settings as the caller read them for this turn (its first answer uses them, later ones read anew).
        `delivery`: the kept delivery it came in, done once the turn is stored (in the same write).
        Returns what the answers given meanwhile used (nothing when another holder answers)."""
        with self.liveness.holding("lease", self.liveness.new_owner()) as owner:
            submitted = self.queue.submit(
                session.id, text, author_id=speaker.user_id, author_name=speaker.name, slack_ts=slack_ts,
                channel=session.channel if session.fork else None, claim=claim, owner=owner,
                lease_seconds=self.lease, attachments=attachments, delivery=delivery,
            )
            if submitted.stored and delivery:
                self.liveness.let_go("delivery", delivery)  # the stored turn is what is kept now
            if submitted.stored and on_stored:
                on_stored()
            if submitted.batch:
                return self._answer_all(session.id, owner, submitted.batch, chosen)
            return Usage()

    def carry_on(self, session: Session, speaker: Speaker, reply_id: int) -> Usage:
        """Continue pressed under a cut answer: a turn asking for the rest, once per answer."""
        return self.submit(session, speaker, CONTINUE_PROMPT, None, claim=f"continue:{reply_id}")

    @contextmanager
    def opener(self, speaker: Speaker) -> Iterator[Opener]:
        """Opening a fork: an owner its lease is made to, renewed by the heartbeat while the block runs. The
        opener answers what waits there once its root is recorded (`answer_held`); see Forks.open."""
        with self.liveness.holding("lease", self.liveness.new_owner()) as owner:
            yield Opener(owner, self.lease, speaker.user_id, speaker.name)

    def answer_held(self, session_id: int, opener: Opener) -> Usage:
        """As the holder of the session's lease since it was made: answer every turn waiting there, in order
        (its topic first), then let go; what the answers used."""
        return self._answer_all(session_id, opener.holder)

    def drain(self, session_id: int) -> None:
        """Answer whatever waits in the session, unless someone already is."""
        with self.liveness.holding("lease", self.liveness.new_owner()) as owner:
            if self.leases.lease(session_id, owner, self.lease):
                self._answer_all(session_id, owner)

    def _answer_all(self, session_id: int, owner: str, batch: Batch | None = None,
                    chosen: ChannelSettings | None = None) -> Usage:
        """As the lease holder: answer `batch` (or the first waiting batch), then every later one; what
        they used, together."""
        answered: tuple[Session, Usage, ChannelSettings | None] | None = None
        session: Session | None = None
        used = Usage()
        try:
            batch = batch or self.queue.next(session_id, owner, self.lease)
            while batch is not None:
                self._tell_given_up(batch)
                if not batch.pending:
                    break
                session = batch.session
                usage, batch = self._answer(batch, owner, chosen)
                answered = (session, usage, chosen) if usage else answered
                chosen = None  # a later batch is a later turn: it reads the settings in force then
                used = used + usage if usage else used
        except BaseException:
            self.leases.release(session_id, owner)
            raise
        if answered:
            try:
                self._followed(*answered)
            except Exception:
                log.exception("after-answer work failed in session %s", session_id)
        if session is not None and session.fork is not None and self.on_released:
            try:
                self.on_released(session)  # after the answer's own follow-ups: the merge's note is the last post
            except Exception:
                log.exception("the merge waiting in session %s failed", session_id)
        return used

    def _answer(self, batch: Batch, owner: str, chosen: ChannelSettings | None) -> tuple[Usage | None, Batch | None]:
        """Answer one batch; returns its usage (None if it failed) and the next batch, if any."""
        session, pending, reply = batch.session, batch.pending, batch.reply
        last = pending[-1]
        place = Place(session.channel_id, session.thread_ts, session.team_id, last.author_id, last.slack_ts,
                      reply.id)
        request = self.inputs.of_session(session, history=batch.history, chosen=chosen, connections=self.connections,
                                         cache=self.cache, remembered=batch.memory)
        if self.memory_tools is not None:
            request = self.memory_tools.equip(request, session, chosen, last.author_id)
        try:
            reserved = self.caps.admit(session, chosen, self.model.ceiling(request), reply.id) if self.caps else None
        except CapReached as capped:
            self._tell_capped(batch, str(capped))
            return None, self.queue.abort(reply, pending, owner, self.lease)
        try:
            return self._call(batch, owner, request, place, reserved)
        except BaseException:
            self._safely_release(reserved)
            raise

    def _call(self, batch: Batch, owner: str, request, place: Place,
              reserved: Reservation | None) -> tuple[Usage | None, Batch | None]:
        session, pending, reply = batch.session, batch.pending, batch.reply
        with self.stopping.holding(reply.id) as stop:
            try:
                writer = self.replies.begin_reply(place, stop)
            except ChatUnavailable as error:
                # no way to post (the workspace uninstalled the app): no model call for an answer nobody sees
                log.warning("session %s cannot be answered: %s", session.id, error)
                return None, self.queue.abort(reply, pending, owner, self.lease, reserved)
            self._session(session, SessionStatus.PROCESSING, batch)
            try:
                completion = self.model.complete(request, writer, stop)
            except Exception as error:
                if not isinstance(error, ModelUnavailable):
                    log.exception("reply failed in session %s", session.id)
                self._safely_fail(writer, failure_notice(error))
                self._session(session, SessionStatus.ACTIVE)
                metrics.TURNS.labels(metrics.place(session), "failed").inc()
                return None, self.queue.abort(reply, pending, owner, self.lease, reserved)
        last = pending[-1]
        reason = None if completion.stopped else completion.stop_reason
        refit = reason == CONTEXT_FULL and last.text != REFIT_PROMPT and self._compacted(session)
        if completion.stopped:
            text, shown = completion.text, f"\n\n_⏹ Stopped by <@{stop.stopped_by}>._"
        else:
            text = completion.text + sources_section(completion.sources) + failures_note(completion.failed_connectors)
            note = stop_note(reason, refit)  # shown, never sent back to Claude
            shown = text[len(completion.text):] + (f"\n\n{note}" if note else "")
        try:
            posted = writer.finish(shown, f"{session.id}:{reply.id}" if continuable(reason, refit) else None)
        except Exception:
            # the answer stays in the history even if Slack refused it; the log says why
            log.exception("posting the reply failed in session %s", session.id)
            posted = []
        self._session(session, SessionStatus.ACTIVE)
        following = self._record(batch, owner, text, completion, posted, reserved)
        metrics.TURNS.labels(metrics.place(session), "stopped" if completion.stopped else "answered").inc()
        if refit and following is None:  # answered again once, on the compacted session, in the same lease
            following = self.queue.submit(
                session.id, REFIT_PROMPT, author_id=last.author_id or "", author_name=last.author_name, slack_ts=None,
                channel=None, claim=f"refit:{reply.id}", owner=owner, lease_seconds=self.lease).batch
        return completion.usage, following

    def _followed(self, session: Session, usage: Usage, chosen: ChannelSettings | None) -> None:
        """After an answer: its context compacted when over the threshold, a fork's budget notice."""
        if self.compactor:
            self.compactor.if_full(session.id, usage.total)
        if session.fork and self.budgets:
            self.budgets.notify_if_reached(session.fork, chosen)

    def _compacted(self, session: Session) -> bool:
        try:
            return bool(self.compactor and self.compactor.compact(session.id))
        except Exception:
            log.exception("compacting session %s after a full context window failed", session.id)
            return False

    def _record(self, batch: Batch, owner: str, text: str, completion: Completion, posted: list[str],
                reserved: Reservation | None) -> Batch | None:
        """Record a completed call's answer. A store that fails meanwhile (an outage, a full disk) delays it: the
        record is tried again for up to a lease, while the heartbeat keeps the lease, and the model is never
        called again for an answer it gave."""
        session, wait = batch.session, RECORD_RETRY
        deadline = time.monotonic() + self.lease
        while True:
            try:
                return self.queue.record(batch.reply, batch.pending, text, completion.usage, posted,
                                         session.channel if session.fork else None, owner, self.lease,
                                         stopped=completion.stopped, stop_reason=completion.stop_reason,
                                         reservation=reserved, connector_calls=dict(completion.connector_calls))
            except Exception as error:
                if time.monotonic() + wait > deadline:
                    raise
                if wait == RECORD_RETRY:
                    log.warning("the answer in session %s could not be recorded (%s); trying again",
                                session.id, type(error).__name__)
            time.sleep(wait)
            wait = min(wait * 2, 2.0)

    def _session(self, session: Session, status: SessionStatus, batch: Batch | None = None) -> None:
        """A fork's agent session: `processing` while it answers (named by its first message, for a fork that
        had no topic), `active` after. Never waited for; Slack refusing it changes nothing."""
        fork = session.fork
        if fork is None or self.agent is None:
            return
        if batch is not None and not any(t.role is Role.USER and t.seq < batch.pending[0].seq for t in batch.history):
            title = first_message_title(fork, batch.pending[0].text)
            if title:
                self.agent.session_renamed(fork, title)
        self.agent.session_status(fork, status)

    def _tell_capped(self, batch: Batch, why: str) -> None:
        """At the cap: each author of the batch's turns, privately and once, that their message is kept unanswered."""
        for author in dict.fromkeys(t.author_id for t in batch.pending if t.author_id):
            try:
                self.answers.tell(Audience(batch.session.team_id, batch.session.channel_id, author,
                                           batch.session.thread_ts), f"{why} {CAPPED_KEPT}")
            except Exception:
                log.exception("could not tell %s that the spend cap held their message", author)

    def _safely_release(self, reserved: Reservation | None) -> None:
        if reserved is not None:
            try:
                self.spending.release(reserved)
            except Exception:  # the store is gone: the reservation is forgotten with its day
                log.exception("a spend reservation of channel %s was not released", reserved.channel.id)

    def _tell_given_up(self, batch: Batch) -> None:
        for turn in batch.given_up:
            log.warning("turn %s in session %s given up after %s attempts", turn.id, turn.session_id, MAX_ATTEMPTS)
            if turn.author_id:
                try:
                    self.answers.tell(Audience(batch.session.team_id, batch.session.channel_id, turn.author_id,
                                               batch.session.thread_ts),
                                      GIVEN_UP)
                except Exception:
                    log.exception("could not tell %s that their message was given up", turn.author_id)

    @staticmethod
    def _safely_fail(writer, notice: str) -> None:
        try:
            writer.fail(notice)
        except Exception:
            log.exception("could not tell the channel that a reply failed")


RECORD_RETRY = 0.25  # seconds before a failed record of an answer is tried again (doubling, at most 2 s)
CAPPED_KEPT = "Your message is kept: react 🔁 to it to have it answered once there is room under the cap."
GIVEN_UP = (f"⚠️ I tried {MAX_ATTEMPTS} times to answer your message and could not save the answer — "
            "it is kept; react 🔁 to it or send it again to try once more.")


def failures_note(failed: tuple[tuple[str, str], ...]) -> str:
    """A short note after an answer naming each connector that failed during it (the answer went on)."""
    return "".join(f"\n\n_⚠️ The connector “{inert(name, 64)}” failed ({inert(what, 120)}); the answer went on "
                   "without it._" for name, what in failed)


def failure_notice(error: Exception) -> str:
    what = str(error) if isinstance(error, ModelUnavailable) else "Something went wrong while answering"
    return f"⚠️ {what} — your message is kept; send another message or react 🔁 to it to try again."
