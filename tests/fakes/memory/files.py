"""Shared files and feedback, in memory (see bot/store/files.py and feedback.py)."""
from __future__ import annotations

from dataclasses import replace

from bot.domain.model import Channel
from bot.services.ports import StoredFile

from .state import Memory


class MemoryFiles:
    def __init__(self, memory: Memory):
        self.m = memory

    def known(self, sha256: str) -> StoredFile | None:
        with self.m.lock:
            return self.m.files.get(sha256)

    def known_shared(self, slack_file_id: str) -> StoredFile | None:
        with self.m.lock:
            for rows in self.m.turns.values():
                for row in rows:
                    for a in row.turn.attachments:
                        if a.slack_file_id == slack_file_id:
                            return self.m.files.get(a.sha256)
        return None

    def keep(self, stored: StoredFile) -> None:
        with self.m.lock:
            if stored.sha256 not in self.m.files:
                self.m.files[stored.sha256], self.m.files_kept_at[stored.sha256] = stored, self.m.clock()

    def forget_shared(self, slack_file_id: str) -> int:
        return self._forget(lambda session, row, a: a.slack_file_id == slack_file_id)

    def forget_files_of(self, channel: Channel, ts: str) -> int:
        return self._forget(lambda session, row, a: session.channel == channel and row.turn.slack_ts == ts)

    def _forget(self, matches) -> int:
        count = 0
        with self.m.lock:
            for session in self.m.sessions.values():
                for row in self.m.rows(session.id):
                    kept = [replace(a, deleted=True) if not a.deleted and matches(session, row, a) else a
                            for a in row.turn.attachments]
                    changed = sum(1 for old, new in zip(row.turn.attachments, kept) if old is not new)
                    if changed:
                        row.change(attachments=tuple(kept))
                        count += changed
        return count


class MemoryFeedback:
    def __init__(self, memory: Memory):
        self.m = memory

    def record(self, channel: Channel, message_ts: str, user_id: str, value: str) -> bool:
        with self.m.lock:
            key = (channel, message_ts, user_id)
            if key in self.m.feedback:
                return False
            self.m.feedback[key] = value
            return True
