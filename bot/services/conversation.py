"""Turns in and replies out, for parents and forks alike.

A user turn is stored as pending, and the session leased, in one transaction; whoever holds the
lease answers every pending turn, in order, one model call per batch, and releases the lease in
the same transaction that finds nothing more waiting. A message that arrives while
Claude is answering is kept and answered next (with full context), never dropped or doubled,
across threads and replicas. A failed call leaves the user's turn stored and marked failed.

A person may stop an answer being written (stopping.py): what it said so far is its answer, marked as
stopped by them, in Slack and in every later request. A fork's agent session is `processing` while it
answers and `active` after (off the answer's path: the calls never wait, never fail it).
"""
from __future__ import annotations

import logging
from collections.abc import Callable, Sequence
from dataclasses import dataclass

from ..domain.agent import SessionStatus, first_message_title
from ..domain.caching import CacheMode
from ..domain.errors import ChatUnavailable, ModelUnavailable
from ..domain.model import Attachment, Role, Session, Usage
from ..domain.settings import ChannelSettings
from ..domain.sources import sources_section
from ..infrastructure import metrics
from .connections import Connections
from .liveness import Liveness
from .model_inputs import model_input
from .ports import MAX_ATTEMPTS, AgentSessions, Audience, Batch, Model, Place, PrivateAnswers, Replies, Store
from .stopping import Stopping

log = logging.getLogger(__name__)


@dataclass(frozen=True)
class Speaker:
    user_id: str
    name: str | None


OnAnswered = Callable[[Session, Usage, ChannelSettings | None], None]  # the settings it was answered under, if read


class Conversation:
    def __init__(self, store: Store, replies: Replies, answers: PrivateAnswers, model: Model, liveness: Liveness,
                 on_answered: OnAnswered | None = None, connections: Connections | None = None,
                 stopping: Stopping | None = None, agent: AgentSessions | None = None,
                 cache: CacheMode = CacheMode.AUTO):
        self.liveness = liveness
        self.lease = liveness.ttl
        self.store = store  # the fork chain is read through its sessions
        self.turns = store.turns
        self.replies = replies
        self.answers = answers
        self.model = model
        self.on_answered = on_answered  # runs after the lease is released: nobody waits on it
        self.connections = connections
        self.stopping = stopping or Stopping(store.stops, store.sessions)
        self.agent = agent
        self.cache = cache  # THREADFORK_CACHE_TTL

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
            submitted = self.turns.submit_turn(
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

    def drain(self, session_id: int) -> None:
        """Answer whatever waits in the session, unless someone already is."""
        with self.liveness.holding("lease", self.liveness.new_owner()) as owner:
            if self.turns.lease(session_id, owner, self.lease):
                self._answer_all(session_id, owner)

    def _answer_all(self, session_id: int, owner: str, batch: Batch | None = None,
                    chosen: ChannelSettings | None = None) -> Usage:
        """As the lease holder: answer `batch` (or the first waiting batch), then every later one; what
        they used, together."""
        answered: tuple[Session, Usage, ChannelSettings | None] | None = None
        used = Usage()
        try:
            batch = batch or self.turns.next_answer(session_id, owner, self.lease)
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
            self.turns.release(session_id, owner)
            raise
        if answered and self.on_answered:
            try:
                self.on_answered(*answered)
            except Exception:
                log.exception("after-answer work failed in session %s", session_id)
        return used

    def _answer(self, batch: Batch, owner: str, chosen: ChannelSettings | None) -> tuple[Usage | None, Batch | None]:
        """Answer one batch; returns its usage (None if it failed) and the next batch, if any."""
        session, pending, reply = batch.session, batch.pending, batch.reply
        last = pending[-1]
        place = Place(session.channel_id, session.thread_ts, session.team_id, last.author_id, last.slack_ts,
                      reply.id)
        request = model_input(self.store, session, history=batch.history, chosen=chosen, connections=self.connections,
                              cache=self.cache)
        with self.stopping.holding(reply.id) as stop:
            try:
                writer = self.replies.begin_reply(place, stop)
            except ChatUnavailable as error:
                # no way to post (the workspace uninstalled the app): no model call for an answer nobody sees
                log.warning("session %s cannot be answered: %s", session.id, error)
                return None, self.turns.abort_reply(reply, pending, owner, self.lease)
            self._session(session, SessionStatus.PROCESSING, batch)
            try:
                completion = self.model.complete(request, writer, stop)
            except Exception as error:
                if not isinstance(error, ModelUnavailable):
                    log.exception("reply failed in session %s", session.id)
                self._safely_fail(writer, failure_notice(error))
                self._session(session, SessionStatus.ACTIVE)
                metrics.TURNS.labels(metrics.place(session), "failed").inc()
                return None, self.turns.abort_reply(reply, pending, owner, self.lease)
        if completion.stopped:
            text, shown = completion.text, f"\n\n_⏹ Stopped by <@{stop.stopped_by}>._"
        else:
            text = completion.text + sources_section(completion.sources) + failures_note(completion.failed_connectors)
            shown = text[len(completion.text):]
        try:
            posted = writer.finish(shown)
        except Exception:
            # the answer stays in the history even if Slack refused it; the log says why
            log.exception("posting the reply failed in session %s", session.id)
            posted = []
        self._session(session, SessionStatus.ACTIVE)
        following = self.turns.record_reply(reply, pending, text, completion.usage, posted,
                                            session.channel if session.fork else None, owner, self.lease,
                                            stopped=completion.stopped)
        metrics.TURNS.labels(metrics.place(session), "stopped" if completion.stopped else "answered").inc()
        if completion.connector_calls:
            self._count_calls(session, dict(completion.connector_calls))
        return completion.usage, following

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

    def _count_calls(self, session: Session, calls: dict[str, int]) -> None:
        """Counted for /context and App Home; a count lost to a store failure loses no answer."""
        try:
            self.store.connector_use.record(session.channel, session.fork.number if session.fork else 0, calls)
        except Exception:
            log.exception("connector calls of session %s were not counted", session.id)

    @staticmethod
    def _safely_fail(writer, notice: str) -> None:
        try:
            writer.fail(notice)
        except Exception:
            log.exception("could not tell the channel that a reply failed")


GIVEN_UP = (f"⚠️ I tried {MAX_ATTEMPTS} times to answer your message and could not save the answer — "
            "it is kept; react 🔁 to it or send it again to try once more.")


def failures_note(failed: tuple[tuple[str, str], ...]) -> str:
    """A short note after an answer naming each connector that failed during it (the answer went on)."""
    return "".join(f"\n\n_⚠️ The connector “{name}” failed ({what[:120]}); the answer went on without it._"
                   for name, what in failed)


def failure_notice(error: Exception) -> str:
    what = str(error) if isinstance(error, ModelUnavailable) else "Something went wrong while answering"
    return f"⚠️ {what} — your message is kept; send another message or react 🔁 to it to try again."
