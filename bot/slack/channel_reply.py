"""A channel's top-level answer: posted with its first words, updated in place (posted.py), with a Stop button
under it while it is written (`stop_answer`, naming the answer's stored turn) — also while Claude thinks before
any word. The final update trades Stop for the feedback buttons.

- Its first words wait for the answer's next event (more words, research, its end): an answer that arrives
  whole is posted once, finished, as soon as its stop reason comes (not once the stream has closed) — with no
  Stop to take away again.
- While Claude thinks and nothing is written, the person's message shows the 👀 (thinking.py). Once it has
  thought for THINKING_NOTE seconds with nothing shown, the answer's own message is posted saying "Thinking…"
  with its Stop button, so a long think can be stopped before any word; the words replace that line as they
  come. The note is a delayed call on the reactions' pool (Reactions.later): it and the reading thread take
  turns on the message (one lock), so the answer is never posted twice, and a finished answer gets no note.
"""
from __future__ import annotations

import threading
from typing import TYPE_CHECKING

from ..services.ports import Place, Source
from .posted import Posted
from .render import stop_block
from .reply import BaseReply

if TYPE_CHECKING:
    from .gateway import SlackChat
    from .thinking import DelayedCall

THINKING_NOTE = 1.5  # seconds Claude thinks with nothing shown before the answer's message says so
THINKING_LINE = "_💭 Thinking…_"


class ChannelReply(BaseReply):
    def __init__(self, chat: SlackChat, place: Place, note_after: float = THINKING_NOTE, **kwargs):
        super().__init__(chat, place, **kwargs)
        self.posted = Posted(chat, place)
        self.streaming = [stop_block(place.reply_id)] if place.reply_id is not None else None
        self._shown_final: str | None = None  # the text shown finished when the answer ended (`ended`)
        self._lock = threading.RLock()  # the reading thread and the thinking note take turns on the message
        self._note_after = note_after
        self._note: DelayedCall | None = None  # the "Thinking…" note's delayed call, once Claude began to think
        self._noting = False  # the message says "Thinking…" (until words replace it)
        self._over = False  # finished or failed: no note from now on

    @property
    def ts(self) -> list[str]:
        return self.posted.ts

    def write(self, delta: str) -> None:
        if not self.text:  # the first words: held until the answer's next event
            self.text = delta
            return
        super().write(delta)

    def thinking_started(self) -> None:
        if self._note is None and self.streaming is not None and not self.ts:
            self._note = self.chat.reactions.later(self._note_after, self._thinking_note)

    def _thinking_note(self) -> None:
        """On the reactions' pool: Claude has thought a while and nothing is shown — the message says so, with
        its Stop (never raises: Posted logs what Slack refused)."""
        with self._lock:
            if self._over or self.ts or self.text:
                return
            self._noting = True
            self._deliver("", final=False)

    def ended(self) -> None:
        """Shown finished at once, without waiting for the stream to close and the answer to be stored."""
        if self.text.strip() and not self.researching:
            self._flush(final=True)
            self._shown_final = self.text if self.ts else None  # not shown: `finish` tries again
            self.thinking.stop()

    def finish(self, tail: str = "", carry_on: str | None = None) -> list[str]:
        self._settle()
        if self._shown_final is not None and not tail and carry_on is None and self.text == self._shown_final:
            self._ended()
            return self.ts  # shown finished already: nothing to add
        return super().finish(tail, carry_on)

    def fail(self, notice: str) -> None:
        self._settle()  # a "Thinking…" already shown takes the notice; else it is posted
        super().fail(notice)

    def _settle(self) -> None:
        with self._lock:  # a note being posted now is shown before the end is
            self._over = True
        if self._note is not None:
            self._note.cancel()

    def _status_line(self) -> str:
        return super()._status_line() or (THINKING_LINE if self._noting else "")

    def _deliver(self, visible: str, final: bool) -> None:
        with self._lock:
            if visible or final:
                self._noting = False  # the words replace the note
                if self._note is not None:
                    self._note.cancel()  # a note not yet due need not wake the scheduler
            self.posted.status = self._status_line()
            self.posted.deliver(visible, final, self.closing if final else self.streaming)

    def _research(self, tool_id: str, status: str, sources: list[Source]) -> None:
        if status != "in_progress":
            self.researching.pop(tool_id, None)
        self._flush(final=False)
