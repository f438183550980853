"""Delivering Claude's answer to Slack while it is being written.

- In a fork's thread the answer streams with chat.startStream / appendStream / stopStream
  (slack-sdk's chat_stream), naming the team and the user whose turn is answered.
- At a channel's top level (where streams need a thread) a message is posted at the first token
  and updated with chat.update at most about once a second.
An 👀 reaction on the person's message says Claude is thinking while no text is visible yet
(thinking.py). Long answers continue in further messages of the same place (see paging.py). If Slack refuses to stream, the rest is posted plainly: never lost.
"""
from __future__ import annotations

import logging
import time
from collections.abc import Callable
from typing import TYPE_CHECKING

from slack_sdk.errors import SlackApiError

from ..domain.text import settled
from ..services.ports import Place
from .paging import Pager, utf8_size
from .thinking import Thinking

if TYPE_CHECKING:
    from .gateway import SlackChat

log = logging.getLogger(__name__)

UPDATE_INTERVAL = 1.0  # seconds between chat.update calls (Slack's guidance: about once a second)
STREAM_INTERVAL = 1.5  # seconds between appendStream calls
UPDATE_LIMIT = 3_800  # bytes; chat.update rejects roughly 4,000+
STREAM_LIMIT = 11_500  # characters per streamed message; Markdown payloads cap at 12,000


class _Reply:
    interval = UPDATE_INTERVAL

    def __init__(self, chat: SlackChat, place: Place, pager: Pager, clock: Callable[[], float] = time.monotonic):
        self.chat = chat
        self.place = place
        self.pager = pager
        self.clock = clock
        self.text = ""
        self.sent: list[str] = []
        self.ts: list[str] = []
        self._last_flush: float | None = None
        self.thinking = Thinking(chat.client, place.channel_id, place.reply_to_ts or place.thread_ts)

    def write(self, delta: str) -> None:
        self.text += delta
        now = self.clock()
        if self._last_flush is None or now - self._last_flush >= self.interval:
            if self._flush(final=False):
                self._last_flush = now
                self.thinking.stop()

    def finish(self) -> list[str]:
        if not self.text.strip():  # an empty answer still gets a visible reply
            self.text = "_(Claude returned an empty answer.)_"
        self._flush(final=True)
        self._close()
        self.thinking.stop()
        return self.ts

    def fail(self, notice: str) -> None:
        if self.ts:
            self.text += f"\n\n{notice}"
            self._flush(final=True)
            self._close()
        else:
            self.chat.call("chat_postMessage", channel=self.place.channel_id, thread_ts=self.place.thread_ts,
                           text=notice)
        self.thinking.stop()

    def _flush(self, final: bool) -> bool:
        visible = self.chat.markdown(self.text if final else settled(self.text))
        if not visible:
            return False
        self._deliver(self.pager.update(visible, final=final), final)
        return True

    def _deliver(self, pages: list[str], final: bool) -> None:
        raise NotImplementedError

    def _close(self) -> None:
        pass


class ChannelReply(_Reply):
    """A top-level answer: posted at the first token, then updated in place."""

    def __init__(self, chat: SlackChat, place: Place, **kwargs):
        super().__init__(chat, place, Pager(UPDATE_LIMIT, utf8_size), **kwargs)

    def _deliver(self, pages: list[str], final: bool) -> None:
        for i, page in enumerate(pages):
            if not page:
                continue
            if i == len(self.ts):
                response = self.chat.call("chat_postMessage", channel=self.place.channel_id,
                                          thread_ts=self.place.thread_ts, markdown_text=page)
                self.ts.append(response["ts"])
                self.sent.append(page)
            elif page != self.sent[i]:
                self.chat.call("chat_update", channel=self.place.channel_id, ts=self.ts[i], markdown_text=page)
                self.sent[i] = page


class ThreadReply(_Reply):
    """A fork's answer, streamed into its thread."""

    interval = STREAM_INTERVAL

    def __init__(self, chat: SlackChat, place: Place, **kwargs):
        super().__init__(chat, place, Pager(STREAM_LIMIT), **kwargs)
        self.streams: list = []
        self.stopped: list[bool] = []
        self.plain = False  # Slack refused to stream: the rest is posted plainly at the end
        self.unsent: dict[int, str] = {}

    def _deliver(self, pages: list[str], final: bool) -> None:
        for i, page in enumerate(pages):
            if i == len(self.sent):
                if not page:
                    continue
                self.sent.append("")
                self.streams.append(None)
                self.stopped.append(False)
            delta = page[len(self.sent[i]):]
            closing = final or i < len(pages) - 1
            if delta and closing and self._streaming(i):
                self._stop(i, delta)  # a page's last words ride on chat.stopStream: one call fewer
            elif delta:
                self._send(i, delta)
            self.sent[i] = page
            if i < len(pages) - 1:
                self._stop(i)

    def _streaming(self, i: int) -> bool:
        return not self.plain and self.streams[i] is not None and not self.stopped[i]

    def _send(self, i: int, delta: str) -> None:
        if not self.plain:
            try:
                if self.streams[i] is None:
                    self.streams[i] = self.chat.client.chat_stream(
                        channel=self.place.channel_id, thread_ts=self.place.thread_ts, buffer_size=1,
                        recipient_team_id=self.place.team_id, recipient_user_id=self.place.recipient_id)
                self.streams[i].append(markdown_text=delta)
                if self.streams[i].ts and len(self.ts) == i:
                    self.ts.append(self.streams[i].ts)
                return
            except SlackApiError as error:
                log.warning("streaming refused (%s); posting plainly", error.response.get("error"))
                self.plain = True
        self.unsent[i] = self.unsent.get(i, "") + delta

    def _stop(self, i: int, last_words: str = "") -> None:
        if self.stopped[i]:
            return
        self.stopped[i] = True
        if self.streams[i] is not None and not self.plain:
            try:
                self.streams[i].stop(markdown_text=last_words or None)
            except Exception as error:  # noqa: BLE001 - a failed stop must not lose the answer
                log.warning("chat.stopStream failed: %s", error)
                if last_words:
                    self.unsent[i] = self.unsent.get(i, "") + last_words  # posted plainly instead

    def _close(self) -> None:
        for i in range(len(self.streams)):
            self._stop(i)
        for i in sorted(self.unsent):
            response = self.chat.call("chat_postMessage", channel=self.place.channel_id,
                                      thread_ts=self.place.thread_ts, markdown_text=self.unsent[i])
            self.ts.append(response["ts"])
        self.unsent.clear()
