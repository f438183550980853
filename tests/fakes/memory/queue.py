"""The turn queue, in memory (see bot/store/queue.py; the rules are bot/domain/queue.py's)."""
from __future__ import annotations

from collections.abc import Collection

from bot.domain.model import Channel, Role, Turn, TurnStatus, Usage
from bot.domain.queue import RETRYABLE, Waiting, held_by, held_by_any, lease_until, next_batch, reply_status
from bot.services.ports import Batch, Submitted

from .state import Memory


class MemoryTurnQueue:
    def __init__(self, memory: Memory):
        self.m = memory

    def submit_turn(self, session_id: int, text: str, *, author_id: str, author_name: str | None,
                    slack_ts: str | None, channel: Channel | None, claim: str | None, owner: str,
                    lease_seconds: float, attachments=(), delivery: str | None = None) -> Submitted:
        with self.m.lock:
            if claim:
                if claim in self.m.claims:
                    return Submitted(stored=False)
                self.m.claims[claim] = self.m.clock()
            if delivery in self.m.inbox:
                self.m.inbox[delivery].finish(self.m.clock())
            self._store(session_id, Role.USER, text, TurnStatus.PENDING, author_id=author_id,
                        author_name=author_name, slack_ts=slack_ts, channel=channel, attachments=attachments)
            if not self.m.take_lease(session_id, owner, lease_seconds):
                return Submitted(stored=True)
            return Submitted(stored=True, batch=self._batch(session_id, owner))

    def append_turn(self, session_id: int, role: Role, text: str, status: TurnStatus, *,
                    author_id: str | None = None, author_name: str | None = None,
                    slack_ts: str | None = None, usage: Usage = Usage(), channel: Channel | None = None,
                    attachments=()) -> Turn:
        with self.m.lock:
            return self._store(session_id, role, text, status, author_id=author_id, author_name=author_name,
                               slack_ts=slack_ts, usage=usage, channel=channel, attachments=attachments)

    def _store(self, session_id, role, text, status, *, author_id, author_name, slack_ts, channel,
               usage: Usage = Usage(), attachments=()) -> Turn:
        turn = self.m.append(session_id, role, text, status, author_id=author_id, author_name=author_name,
                             slack_ts=slack_ts, usage=usage, attachments=attachments)
        if slack_ts and channel:
            self.m.index(channel, slack_ts, session_id)
        return turn

    def next_answer(self, session_id: int, owner: str, lease_seconds: float) -> Batch | None:
        with self.m.lock:
            return self._renew_and_batch(session_id, owner, lease_seconds)

    def record_reply(self, reply: Turn, pending: list[Turn], text: str, usage: Usage, posted: list[str],
                     channel: Channel | None, owner: str, lease_seconds: float, stopped: bool = False,
                     stop_reason: str | None = None, reservation=None) -> Batch | None:
        with self.m.lock:
            self.m.release(reservation)
            if not self._renew(reply.session_id, owner, lease_seconds):
                return None
            row = self.m.row_of(reply)
            status = reply_status(stopped, stop_reason)
            row.change(text=text, status=status, usage=usage, stop_reason=stop_reason,
                       slack_ts=posted[0] if posted else None, stopped_by=row.turn.stopped_by if stopped else None)
            self.m.settle(pending, TurnStatus.DECLINED if status is TurnStatus.DECLINED else TurnStatus.ANSWERED)
            for ts in posted if channel else ():
                self.m.index(channel, ts, reply.session_id)
            self.m.add_spend(reply.session_id, usage)
            return self._batch(reply.session_id, owner)

    def abort_reply(self, reply: Turn, pending: list[Turn], owner: str, lease_seconds: float,
                    reservation=None) -> Batch | None:
        with self.m.lock:
            self.m.release(reservation)
            if not self._renew(reply.session_id, owner, lease_seconds):
                return None
            self.m.row_of(reply).change(status=TurnStatus.ABORTED)
            self.m.settle(pending, TurnStatus.FAILED)
            return self._batch(reply.session_id, owner)

    def _renew_and_batch(self, session_id: int, owner: str, lease_seconds: float) -> Batch | None:
        return self._batch(session_id, owner) if self._renew(session_id, owner, lease_seconds) else None

    def _renew(self, session_id: int, owner: str, lease_seconds: float) -> bool:
        now = self.m.clock()
        return self.m.change(session_id, [held_by(owner)],
                             {"lease_until": lease_until(now, lease_seconds), "last_activity_at": now})

    def _batch(self, session_id: int, owner: str) -> Batch | None:
        session = self.m.sessions[session_id].session()
        rows = [r for r in self.m.rows(session_id) if r.turn.status is TurnStatus.PENDING]
        batch = next_batch([Waiting(r.turn, r.attempts) for r in rows], session)
        self.m.settle(batch.failed, TurnStatus.FAILED)
        if batch.release:
            self.m.release_lease(session_id, owner)
            return Batch(session, [], None, [], batch.given_up) if batch.given_up else None
        for row in rows:
            row.attempts += row.turn.status is TurnStatus.PENDING
        reply = self.m.append(session_id, Role.ASSISTANT, "", TurnStatus.STREAMING)
        return Batch(session, batch.answer, reply, self._history(session_id), batch.given_up)

    def lease(self, session_id: int, owner: str, seconds: float) -> bool:
        with self.m.lock:
            return self.m.take_lease(session_id, owner, seconds)

    def release(self, session_id: int, owner: str) -> None:
        with self.m.lock:
            self.m.release_lease(session_id, owner)

    def renew_leases(self, owners: Collection[str], seconds: float) -> None:
        with self.m.lock:
            self.m.change_all([held_by_any(owners)], {"lease_until": lease_until(self.m.clock(), seconds)})

    def release_leases(self, owners: Collection[str]) -> None:
        with self.m.lock:
            self.m.change_all([held_by_any(owners)], {"lease_owner": None, "lease_until": None})

    def turns(self, session_id: int, upto_seq: int | None = None) -> list[Turn]:
        with self.m.lock:
            history = self._history(session_id)
        return history if upto_seq is None else [t for t in history if t.seq <= upto_seq]

    def _history(self, session_id: int) -> list[Turn]:
        return [r.turn for r in self.m.rows(session_id) if not r.deleted]

    def edit_turn(self, channel: Channel, ts: str, author_id: str, text: str) -> bool:
        with self.m.lock:
            rows = [r for r in self._user_rows(channel, ts) if r.turn.author_id == author_id]
            for row in rows:
                row.change(text=text)
            return bool(rows)

    def delete_turn(self, channel: Channel, ts: str) -> bool:
        with self.m.lock:
            rows = self._user_rows(channel, ts)
            for row in rows:
                row.deleted = True
            return bool(rows)

    def retry_turn(self, channel: Channel, ts: str) -> int | None:
        with self.m.lock:
            for row in self._user_rows(channel, ts, role=None):
                if row.turn.status is RETRYABLE:
                    row.change(status=TurnStatus.PENDING)
                    row.attempts = 0
                    return row.turn.session_id
            return None

    def _user_rows(self, channel: Channel, ts: str, role: Role | None = Role.USER):
        return [r for s in self.m.sessions.values() if s.channel == channel for r in self.m.rows(s.id)
                if r.turn.slack_ts == ts and (role is None or r.turn.role is role)]
