"""Turns in and replies out, for parents and forks alike.

A user turn is stored as pending, then the session is drained: whoever holds the session's lease
answers every pending turn, in order, one model call per batch. A message that arrives while
Claude is answering is kept and answered next (with full context), never dropped or doubled,
across threads and replicas. A failed call leaves the user's turn stored and marked failed.
"""
from __future__ import annotations

import logging
import uuid
from dataclasses import dataclass

from ..domain.errors import ModelUnavailable
from ..domain.model import Role, Session, Turn, TurnStatus
from ..store import Store
from .ports import Chat, Model, Place
from .sessions import model_input

log = logging.getLogger(__name__)

LEASE_SECONDS = 900  # longer than any single model call; expired leases are swept


@dataclass(frozen=True)
class Speaker:
    user_id: str
    name: str | None


class Conversation:
    def __init__(self, store: Store, chat: Chat, model: Model):
        self.store = store
        self.chat = chat
        self.model = model

    def submit(self, session: Session, speaker: Speaker, text: str, slack_ts: str | None) -> None:
        self.store.append_turn(
            session.id, Role.USER, text, TurnStatus.PENDING, author_id=speaker.user_id,
            author_name=speaker.name, slack_ts=slack_ts,
            channel_id=session.channel_id if session.fork else None,
        )
        self.drain(session.id)

    def drain(self, session_id: int) -> None:
        owner = uuid.uuid4().hex
        while self.store.lease(session_id, owner, LEASE_SECONDS):
            try:
                while pending := self.store.pending_turns(session_id):
                    self._answer(self.store.session(session_id), pending)
            finally:
                self.store.release(session_id, owner)
            # a turn stored just before the release found the lease taken: look once more
            if not self.store.pending_turns(session_id):
                return

    def _answer(self, session: Session, pending: list[Turn]) -> None:
        if session.fork and session.fork.status.value != "open":
            self.store.settle(pending, TurnStatus.FAILED)
            return
        last = pending[-1]
        place = Place(session.channel_id, session.thread_ts, session.team_id, last.author_id, last.slack_ts)
        writer = self.chat.begin_reply(place)
        try:
            completion = self.model.complete(model_input(self.store, session), writer.write)
        except ModelUnavailable as error:
            writer.fail(failure_notice(error))
            self.store.settle(pending, TurnStatus.FAILED)
            return
        except Exception:
            log.exception("reply failed in session %s", session.id)
            writer.fail("⚠️ Something went wrong while answering — your message is kept; send another to retry.")
            self.store.settle(pending, TurnStatus.FAILED)
            return
        try:
            ts = writer.finish()
        except Exception:
            # the answer stays in the history even if Slack refused it; the log says why
            log.exception("posting the reply failed in session %s", session.id)
            ts = None
        self.store.record_reply(session.id, pending, completion.text, completion.usage, ts,
                               session.channel_id if session.fork else None)


def failure_notice(error: ModelUnavailable) -> str:
    return f"⚠️ {error} — your message is kept. Send another message to try again."
