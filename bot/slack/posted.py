"""An answer kept in messages posted with chat.postMessage and rewritten with chat.update: a
channel's top-level answers, and the rest of a fork answer whose stream broke (reply.py).

Invariants, whatever Slack refuses or fails on:
- Nothing here raises: a failed call is logged and tried again at the next flush, with the text
  as it is then. Pages are posted in order; a page waits until the one before it is posted.
- An update states a whole page, so repeating one never shows words twice. A message known to
  show part of the answer (a broken stream's, "adopted") is rewritten rather than posted beside.
  If Slack will not rewrite it, or it may still be streaming ("kept": chat.update of a streaming
  message is refused), it is kept as it is and the answer continues after what it is known to show.
- `Message.shown` is what Slack confirmed a message shows. A page whose final update fails is
  completed at once by posting what it lacks right after it, so the finished answer is whole.
"""
from __future__ import annotations

import logging
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from ..services.ports import Place
from .paging import Pager, open_fence, utf8_size
from .clients import FAILURES, failure_code

if TYPE_CHECKING:
    from .gateway import SlackChat

log = logging.getLogger(__name__)

UPDATE_LIMIT = 3_800  # bytes; chat.update rejects roughly 4,000+


@dataclass
class Message:
    ts: str
    shown: str
    completed_by: list[str] = field(default_factory=list)  # posts with what its final update could not add
    status: str = ""  # the status line shown under its text (the last message's, while Claude researches)
    # the blocks under its text, if any: the last message's feedback buttons, or its Stop button while it streams
    closing: list[dict] | None = None


def _content(markdown: str, closing: list[dict] | None) -> dict:
    """A message's content: Markdown alone, or as a markdown block with the closing blocks under it
    (Slack takes no markdown_text beside blocks; `text` is then the notification's fallback)."""
    if not closing:
        return {"markdown_text": markdown}
    return {"blocks": [{"type": "markdown", "text": markdown}, *closing], "text": markdown}


def continuation(shown: str, page: str) -> str:
    """What `page` adds to `shown` (its prefix), reopening a code fence `shown` leaves open."""
    fence = open_fence(shown)
    rest = page[len(shown):]
    return f"{fence}\n{rest}" if fence else rest


class Posted:
    def __init__(self, chat: SlackChat, place: Place, adopted: Message | None = None, kept: Message | None = None):
        """`adopted`: a message known to show the start of the answer, rewritten as the answer goes on; `kept`: one
        that may still be streaming (Slack updates no such message), left as it is, the answer going on after it."""
        self.chat = chat
        self.place = place
        self.client = chat.client_for(place.team_id)
        self.pager = Pager(UPDATE_LIMIT, utf8_size)
        self.messages: list[Message] = [adopted] if adopted else []
        self.adopted = adopted  # until Slack accepts its rewrite
        self.before: list[str] = []  # kept as they were; they hold the start of the answer
        self._skip = 0  # characters of the given text that `before` already shows
        self._reopen = ""
        self.status = ""  # a line shown under the last message's text (research under way); "" for none
        if kept:
            self._keep(kept)

    @property
    def ts(self) -> list[str]:
        return self.before + [ts for m in self.messages for ts in (m.ts, *m.completed_by)]

    def deliver(self, text: str, final: bool, closing: list[dict] | None = None) -> None:
        """Show `text` so far (all of it with `final`), with `closing` blocks (the feedback buttons, or while it
        streams a Stop button) under the last message from the moment it is posted: no call is spent adding
        them at the end; blocks that change (Stop giving way to feedback) ride on the update of the text."""
        pages = self.pager.update(self._reopen + text[self._skip:], final=final)
        for i, page in enumerate(pages):
            last = i == len(pages) - 1
            status = self.status if last and not final else ""
            under = (closing or None) if last else None
            if not page and not status:
                continue
            if i == len(self.messages):
                if not self._post(page, status, under):
                    return
            elif (page, status, under) != (self.messages[i].shown, self.messages[i].status, self.messages[i].closing) \
                    and not self._update(self.messages[i], page, status, under):
                if self.messages[i] is self.adopted:
                    self._let_go(text)
                    self.deliver(text, final, closing)
                    return
                if final:
                    self._complete(self.messages[i], page)

    def _complete(self, message: Message, page: str) -> None:
        """Post what a message lacks of its page (its last chance), right after it."""
        if page.startswith(message.shown) and (rest := continuation(message.shown, page)).strip():
            if ts := self._send("chat_postMessage", markdown_text=rest):
                message.completed_by.append(ts)
                message.shown = page

    def _post(self, page: str, status: str = "", closing: list[dict] | None = None) -> bool:
        ts = self._send("chat_postMessage", **_content(page + status, closing))
        if ts:
            self.messages.append(Message(ts, page, status=status, closing=closing or None))
        return ts is not None

    def _update(self, message: Message, page: str, status: str = "", closing: list[dict] | None = None) -> bool:
        if not self._send("chat_update", ts=message.ts, **_content(page + status, closing)):
            return False
        message.shown, message.status, message.closing = page, status, closing or None
        if message is self.adopted:
            self.adopted = None
        return True

    def _let_go(self, text: str) -> None:
        """The adopted message stays as it is; the answer goes on after what it is known to show."""
        message = self.messages.pop(0)
        self.adopted = None
        if text.startswith(message.shown):  # else nobody knows where it ends: repeat rather than lose
            self._keep(message)
        else:
            self.before.append(message.ts)
        self.pager = Pager(UPDATE_LIMIT, utf8_size)

    def _keep(self, message: Message) -> None:
        """`message` shows the start of the answer as it is; the answer goes on after it."""
        fence = open_fence(message.shown)
        self.before.append(message.ts)
        self._skip, self._reopen = len(message.shown), f"{fence}\n" if fence else ""

    def _send(self, method: str, **arguments) -> str | None:
        """The ts of the message posted or updated; None (logged) if Slack failed."""
        if method == "chat_postMessage" and self.place.thread_ts:
            arguments["thread_ts"] = self.place.thread_ts
        try:
            return getattr(self.client, method)(channel=self.place.channel_id, **arguments)["ts"]
        except FAILURES as error:
            log.warning("Slack %s failed (%s); the answer is kept and sent again", method.replace("_", "."),
                        failure_code(error))
            return None
