"""The turn queue's repository, in memory (see bot/store/queue.py; its use cases are bot/services/queue.py's)."""
from __future__ import annotations

from collections.abc import Collection

from bot.domain.model import Channel, Role, Turn, TurnStatus, Usage
from bot.domain.queue import RETRYABLE, Waiting, held_by, held_by_any, lease_until
from bot.services.ports import Held

from .state import Memory


class MemoryTurnQueue:
    def __init__(self, memory: Memory):
        self.m = memory

    def enqueue(self, session_id: int, text: str, *, author_id: str, author_name: str | None,
                slack_ts: str | None, channel: Channel | None, owner: str, lease_seconds: float,
                attachments=()) -> Held | None:
        with self.m.lock:
            self._store(session_id, Role.USER, text, TurnStatus.PENDING, author_id=author_id,
                        author_name=author_name, slack_ts=slack_ts, channel=channel, attachments=attachments)
            return self._held(session_id) if self.m.take_lease(session_id, owner, lease_seconds) else None

    def append_turn(self, session_id: int, role: Role, text: str, status: TurnStatus, *,
                    author_id: str | None = None, author_name: str | None = None,
                    slack_ts: str | None = None, usage: Usage = Usage(), channel: Channel | None = None,
                    attachments=(), source_fork_id: int | None = None, covers_seq: int | None = None) -> Turn:
        with self.m.lock:
            return self._store(session_id, role, text, status, author_id=author_id, author_name=author_name,
                               slack_ts=slack_ts, usage=usage, channel=channel, attachments=attachments,
                               source_fork_id=source_fork_id, covers_seq=covers_seq)

    def _store(self, session_id, role, text, status, *, author_id, author_name, slack_ts, channel,
               usage: Usage = Usage(), attachments=(), source_fork_id=None, covers_seq=None) -> Turn:
        turn = self.m.append(session_id, role, text, status, author_id=author_id, author_name=author_name,
                             slack_ts=slack_ts, usage=usage, attachments=attachments, source_fork_id=source_fork_id,
                             covers_seq=covers_seq)
        if slack_ts and channel:
            self.m.index(channel, slack_ts, session_id)
        return turn

    def renew(self, session_id: int, owner: str, lease_seconds: float) -> Held | None:
        now = self.m.clock()
        with self.m.lock:
            renewed = self.m.change(session_id, [held_by(owner)],
                                    {"lease_until": lease_until(now, lease_seconds), "last_activity_at": now})
            return self._held(session_id) if renewed else None

    def _held(self, session_id: int) -> Held:
        return Held(self.m.sessions[session_id].session())

    def waiting(self, session_id: int) -> list[Waiting]:
        with self.m.lock:
            return [Waiting(r.turn, r.attempts) for r in self.m.rows(session_id) if r.turn.status is TurnStatus.PENDING]

    def settle(self, turns, status: TurnStatus) -> None:
        with self.m.lock:
            self.m.settle(list(turns), status)

    def start_reply(self, held: Held, answer) -> Turn:
        with self.m.lock:
            for turn in answer:
                self.m.row_of(turn).attempts += 1
            return self.m.append(held.session.id, Role.ASSISTANT, "", TurnStatus.STREAMING)

    def history(self, held: Held) -> list[Turn]:
        with self.m.lock:
            return self._history(held.session.id)

    def finish_reply(self, reply: Turn, text: str, usage: Usage, status: TurnStatus, posted, channel: Channel | None,
                     stop_reason: str | None = None) -> None:
        posted = list(posted)
        with self.m.lock:
            row = self.m.row_of(reply)
            row.change(text=text, status=status, usage=usage, stop_reason=stop_reason,
                       slack_ts=posted[0] if posted else None,
                       stopped_by=row.turn.stopped_by if status is TurnStatus.STOPPED else None)
            for ts in posted if channel else ():
                self.m.index(channel, ts, reply.session_id)

    def abort_reply(self, reply: Turn) -> None:
        with self.m.lock:
            self.m.row_of(reply).change(status=TurnStatus.ABORTED)

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
