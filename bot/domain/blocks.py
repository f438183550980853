"""How a stored turn becomes the content blocks of a request: byte-stable (a turn renders to the same
text every time, and each Turn object is rendered once: memo.py), its speaker named, its files before its
words. A block's `cache_control` is the API's own shape: a 5-minute breakpoint carries no `ttl`."""
from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, replace

from .caching import Ttl
from .memo import IdentityMemo
from .model import Attachment, FileKind, Role, Turn, TurnStatus

EMPTY_ANSWER = "[no answer: this reply was empty]"


@dataclass(frozen=True)
class Block:
    """One content block of a message: text, or an image or PDF by its Files API id (then `text` is
    the file's name, a document's title)."""

    role: str  # "user" or "assistant"
    text: str
    breakpoint: bool = False
    kind: str = "text"  # "text", "image" or "document"
    file_id: str | None = None
    ttl: Ttl = Ttl.FIVE_MINUTES  # a breakpoint's: 5 minutes is the API's default, sent without a `ttl`

    def content(self) -> dict:
        """The Messages API's content block."""
        if self.kind == "text":
            content = {"type": "text", "text": self.text}
        else:
            content = {"type": self.kind, "source": {"type": "file", "file_id": self.file_id}}
            if self.kind == "document":
                content["title"] = self.text
        if self.breakpoint:
            content["cache_control"] = cache_control(self.ttl)
        return content

    def marked(self, breakpoint: bool = True, ttl: Ttl = Ttl.FIVE_MINUTES) -> Block:
        return replace(self, breakpoint=breakpoint, ttl=ttl if breakpoint else Ttl.FIVE_MINUTES)


def cache_control(ttl: Ttl) -> dict:
    """A breakpoint as the API takes it: 5 minutes without a `ttl` field, as Threadfork always sent it."""
    return {"type": "ephemeral", "ttl": "1h"} if ttl is Ttl.ONE_HOUR else {"type": "ephemeral"}



COMPACTION_HEADER = "[Summary of the earlier conversation, compacted by Threadfork to save context:]"


def _render(turn: Turn) -> tuple[Block, ...]:
    if turn.role is Role.USER:
        files = tuple(file_block(a) for a in turn.attachments if not a.deleted)
        words = turn.text or (FILES_ONLY if files else "")
        return (*files, Block("user", f"{speaker_line(turn.author_id, turn.author_name)}\n{words}"))
    if turn.role is Role.SUMMARY:
        return (Block("user", turn.text),)
    if turn.role is Role.COMPACTION:
        return (Block("user", f"{COMPACTION_HEADER}\n{turn.text}"),)
    text = turn.text if turn.text.strip() else EMPTY_ANSWER
    if turn.status is TurnStatus.INTERRUPTED:
        text = f"{text}\n\n[This reply was interrupted and is incomplete.]"
    elif turn.status is TurnStatus.STOPPED:
        text = f"{text}\n\n{stopped_note(turn.stopped_by)}"
    return (Block("assistant", text),)


def stopped_note(user_id: str | None) -> str:
    """What follows a stopped answer in every later request: the same bytes each time (the stopper's id)."""
    return f"[<@{user_id}> stopped this reply here; it is incomplete.]" if user_id else \
        "[This reply was stopped here; it is incomplete.]"


FILES_ONLY = "[shared the files above, without a message]"


def file_block(attachment: Attachment) -> Block:
    """A shared file as one user block, placed before the words of its turn."""
    if attachment.kind is FileKind.TEXT:
        return Block("user", f"[File “{attachment.name}” ({attachment.media_type}):]\n{attachment.text}")
    return Block("user", attachment.name, kind=attachment.kind.value, file_id=attachment.file_id)


# a turn's blocks, remembered per Turn object (see memo.py): a 1,000-turn session renders only its new turns
render_turn: Callable[[Turn], tuple[Block, ...]] = IdentityMemo(_render)


def speaker_line(author_id: str | None, author_name: str | None) -> str:
    """`[alice <@U123>]`; a name without an id is not a person's (another app's post, an adopted
    thread's earlier messages: transcript.py)."""
    if author_id and author_name:
        return f"[{author_name} <@{author_id}>]"
    if author_id:
        return f"[<@{author_id}>]"
    return f"[{author_name}]" if author_name else "[unknown speaker]"
