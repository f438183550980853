"""Files shared with turns: each content stored once (by sha256) — an image or PDF as its Files API
id, a text file's text — and each sharing as an attachment of its turn. A file deleted in Slack is
marked on every turn that shared it, and the sessions' caches are told (version bump), so it is never
sent to Claude again while the turn's words stay."""
from __future__ import annotations

from sqlalchemy import insert, select, update
from sqlalchemy.exc import IntegrityError

from ..domain.model import Channel, FileKind
from ..services.ports import StoredFile
from .work import Database
from .rows import bump, in_channel
from .tables import attachments, files, sessions, turns


class SqlFiles:
    def __init__(self, db: Database):
        self.db = db

    def known(self, sha256: str) -> StoredFile | None:
        with self.db.reading() as conn:
            row = conn.execute(select(files).where(files.c.sha256 == sha256)).first()
        return _stored(row) if row else None

    def known_shared(self, slack_file_id: str) -> StoredFile | None:
        with self.db.reading() as conn:
            row = conn.execute(select(files).join(attachments, attachments.c.sha256 == files.c.sha256)
                               .where(attachments.c.slack_file_id == slack_file_id).limit(1)).first()
        return _stored(row) if row else None

    def keep(self, stored: StoredFile) -> None:
        try:
            with self.db.writing() as conn:
                conn.execute(insert(files).values(
                    sha256=stored.sha256, kind=stored.kind.value, media_type=stored.media_type, size=stored.size,
                    file_id=stored.file_id, text=stored.text, created_at=self.db.now()))
        except IntegrityError:
            pass  # the same content kept meanwhile by another delivery: one copy is all there is

    def forget_shared(self, slack_file_id: str) -> int:
        return self._forget(attachments.c.slack_file_id == slack_file_id)

    def forget_files_of(self, channel: Channel, ts: str) -> int:
        of_message = select(turns.c.id).join(sessions, sessions.c.id == turns.c.session_id).where(
            in_channel(channel), turns.c.slack_ts == ts)
        return self._forget(attachments.c.turn_id.in_(of_message))

    def _forget(self, condition) -> int:
        with self.db.writing() as conn:
            changed = conn.execute(
                update(attachments).where(condition, attachments.c.deleted.is_(False)).values(deleted=True)
                .returning(attachments.c.turn_id)).scalars().all()
            if changed:
                owners = conn.execute(select(turns.c.session_id).where(turns.c.id.in_(changed))).scalars().all()
                bump(conn, set(owners))
            return len(changed)


def _stored(row) -> StoredFile:
    return StoredFile(row.sha256, FileKind(row.kind), row.media_type, row.size, row.file_id, row.text)
