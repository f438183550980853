"""A fork's answer, streamed into its thread with chat.startStream / appendStream / stopStream, naming the team and
the user whose turn is answered. The calls are made directly (not through slack-sdk's ChatStream, whose buffer
would resend unconfirmed text) so that what each message is known to show is exact. What every reply does is
reply.py's (BaseReply); a long answer continues in further streamed messages (paging.py: Pager).

Invariants, whatever Slack refuses or fails on (after the retries in clients.py):
- Only a Stop is a Stop: an append answered `stopped_by_user`, or refused as not streaming once a Stop is
  recorded. A stream Slack ended without one (it expires streams after about five minutes:
  `message_not_in_streaming_state`) keeps what it shows, and the answer goes on in a new streamed message
  in the same thread, where Stop and the feedback buttons work as before.
- A stream that breaks otherwise — start, append or stop refused, 5xx, connection lost, or startStream
  rate-limited (not waited for) — hands the rest of the answer to post-and-update in the same
  thread, at once. The broken stream's message is rewritten with chat.update once Slack says it no longer
  streams (the same whether or not the failed call landed), never posted again beside itself; a message
  that may still stream is never updated (Slack: `streaming_state_conflict`): it keeps what it shows and
  the rest follows it.
"""
from __future__ import annotations

import logging
import time
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from slack_sdk.errors import SlackApiError
from slack_sdk.models.messages.chunk import MarkdownTextChunk

from ..services.ports import Place, Source, StopSignal
from .clients import FAILURES, failure_code, retry_after
from .paging import APPEND, Message, Pager, Posted, open_fence
from .reply import BaseReply
from .research import task_chunk

if TYPE_CHECKING:
    from .gateway import SlackChat

log = logging.getLogger(__name__)

STREAM_INTERVAL = 1.5  # seconds between appendStream calls
STREAM_LIMIT = 11_500  # characters per streamed message; Markdown payloads cap at 12,000
NOT_STREAMING = "message_not_in_streaming_state"  # a stream that ended: stopped, or expired by Slack
STOPPED_BY_USER = "stopped_by_user"  # an append after a person pressed Stop


@dataclass
class _Stream:
    """One page's streamed message: from `offset` in the page on (reopening `reopen`, a code fence the messages
    before it left open), after the messages of the page whose streams Slack expired (`expired`)."""
    ts: str | None = None
    shown: str = ""  # what Slack confirmed the streamed message shows
    stopped: bool = False  # chat.stopStream was called (whatever came of it)
    held: bool = False  # Slack took no more appends (a person pressed Stop): the rest waits for chat.stopStream
    expired: list[str] = field(default_factory=list)
    offset: int = 0
    reopen: str = ""

    def part(self, page: str) -> str:
        """What this message is to show of `page`."""
        return self.reopen + page[self.offset:]

    def expire(self) -> None:
        """Slack ended the stream without a Stop: its message keeps what it shows; a new one goes on after it."""
        fence = open_fence(self.shown)
        self.expired.append(self.ts)
        self.offset += len(self.shown) - len(self.reopen)
        self.reopen = f"{fence}\n" if fence else ""
        self.ts, self.shown = None, ""


def _chunks(text: str) -> list[MarkdownTextChunk] | None:
    """Text as slack-sdk's ChatStream sends it."""
    return [MarkdownTextChunk(text=text)] if text else None


class _StreamsPaused(Exception):
    """chat.startStream was rate-limited moments ago: not worth another refusal."""


class ThreadReply(BaseReply):
    """A fork's answer, streamed into its thread; posted and updated there if the stream breaks."""

    floor = STREAM_INTERVAL
    kind = APPEND

    def __init__(self, chat: SlackChat, place: Place, stop: StopSignal | None = None, **kwargs):
        """`stop`: asked before each append — once Stop was pressed nothing more streams; the answer's last
        words ride on chat.stopStream."""
        super().__init__(chat, place, **kwargs)
        self.stop = stop
        self.pager = Pager(STREAM_LIMIT)
        self.streams: list[_Stream] = []
        self.rest: Posted | None = None  # the answer from page `handover` on, once a stream broke
        self.handover = 0

    @property
    def ts(self) -> list[str]:
        streams = self.streams[:self.handover + 1 if self.rest else None]
        streamed = [ts for i, s in enumerate(streams) for ts in (*s.expired, s.ts)
                    if ts and not (self.rest and i == self.handover and ts == s.ts)]
        return streamed + (self.rest.ts if self.rest else [])

    def _deliver(self, visible: str, final: bool) -> None:
        if self.rest is None:
            broken = self._stream(self.pager.update(visible, final=final), final)
            if broken is None:
                return
            self._hand_over(*broken)
        start, reopened = self.pager.starts[self.handover]
        self.rest.status = self._status_line()
        stream = self.streams[self.handover] if self.handover < len(self.streams) else _Stream()
        self.rest.deliver(stream.part(reopened + visible[start:]), final, self.closing)

    def _research(self, tool_id: str, status: str, sources: list[Source]) -> None:
        """A task card in the stream (started with the card when no text is shown yet); once the
        stream broke, a status line like a top-level answer's."""
        if self.rest is not None:
            if status != "in_progress":
                self.researching.pop(tool_id, None)
            self._flush(final=False)
            return
        chunk = task_chunk(tool_id, self.researching[tool_id], status, sources, self.outputs.get(tool_id, ""))
        stream = self.streams[-1] if self.streams and not self.streams[-1].stopped else None
        try:
            if stream is None or stream.ts is None:  # none yet, or the last one expired and none followed it
                started = stream or _Stream()
                self._start(started, "", [chunk])
                if stream is None:
                    self.streams.append(started)
            elif self._may_show():
                try:
                    self.client.chat_appendStream(channel=self.place.channel_id, ts=stream.ts, chunks=[chunk])
                except FAILURES as error:
                    if failure_code(error) != NOT_STREAMING or stream.held or not self._may_show():
                        raise
                    stream.expire()  # Slack ended the stream without a Stop: the card opens the next message
                    self._start(stream, "", [chunk])
            self.thinking.stop()
        except (*FAILURES, _StreamsPaused) as error:
            log.info("a research card was not shown (%s)", failure_code(error))

    def _stream(self, pages: list[str], final: bool) -> tuple[int, str] | None:
        """Stream what is new in each page; the index of the page whose stream broke and Slack's error, if one did."""
        for i, page in enumerate(pages):
            if i == len(self.streams):
                if not page:
                    continue
                self.streams.append(_Stream())
            stream = self.streams[i]
            closing = final or i < len(pages) - 1  # a page's last words ride on chat.stopStream
            while not stream.stopped:
                failed = self._show(stream, stream.part(page), closing, last=final and i == len(pages) - 1)
                if failed is None:
                    break
                step, code = failed
                if step == "chat.appendStream" and code == STOPPED_BY_USER:
                    stream.held = True  # stopped in Slack a moment before this replica heard of it
                elif step == "chat.appendStream" and code == NOT_STREAMING:
                    if not self._may_show():
                        stream.held = True  # a Stop is recorded: this is its end, not Slack's
                    else:
                        log.info("Slack ended a stream (%s) without a Stop; the answer goes on in a new message",
                                 code)
                        stream.expire()
                        continue
                else:
                    log.warning("%s failed (%s); the answer is posted and updated instead", step, code)
                    return i, code
                break
        return None

    def _show(self, stream: _Stream, part: str, closing: bool, last: bool) -> tuple[str, str] | None:
        """Stream what `part` adds to what the stream shows (stopping it when `closing`); the failed call and
        Slack's error code, if one failed."""
        delta = part[len(stream.shown):]
        step = "chat.startStream"
        try:
            if stream.ts is None:
                self._start(stream, delta)
                delta = ""
            elif delta and not closing and not stream.held and self._may_show():
                step = "chat.appendStream"
                self.client.chat_appendStream(channel=self.place.channel_id, ts=stream.ts, chunks=_chunks(delta))
                stream.shown = part
            if closing:
                step, stream.stopped = "chat.stopStream", True
                self.client.chat_stopStream(channel=self.place.channel_id, ts=stream.ts,
                                            chunks=_chunks(delta), blocks=self.closing if last else None,
                                            session_status=self._session_after(more=not last))
                stream.shown = part
                if last and self.chat.sessions is not None:
                    self.chat.sessions.stream_ended(self.place.team_id, self.place.channel_id, self.place.thread_ts)
        except (*FAILURES, _StreamsPaused) as error:
            return step, failure_code(error)
        return None

    def _session_after(self, more: bool) -> str | None:
        """The fork's agent session as a stopStream leaves it (None: Slack's default, active)."""
        sessions = self.chat.sessions
        return sessions.status_on_stop(self.place.team_id, self.place.channel_id, self.place.thread_ts, more) \
            if sessions is not None else None

    def _may_show(self) -> bool:
        return self.stop is None or self.stop.clear_to_show()

    def _start(self, stream: _Stream, text: str, cards: list[dict] = ()) -> None:
        if time.monotonic() < self.chat.streams_resume_at.get(self.place.team_id, 0.0):
            raise _StreamsPaused()
        if self.chat.sessions is not None:  # the fork's session says `processing` before the answer shows
            self.chat.sessions.landed(self.place.team_id, self.place.channel_id, self.place.thread_ts)
        try:
            response = self.client.chat_startStream(
                channel=self.place.channel_id, thread_ts=self.place.thread_ts,
                chunks=[*cards, *(_chunks(text) or [])] or None, task_display_mode="timeline",
                recipient_team_id=self.place.team_id, recipient_user_id=self.place.recipient_id)
        except SlackApiError as error:
            if error.response.status_code == 429:
                self.chat.streams_resume_at[self.place.team_id] = time.monotonic() + retry_after(error)
            raise
        stream.ts, stream.shown = response["ts"], text

    def _hand_over(self, broken: int, code: str) -> None:
        """The rest of the answer, from page `broken` on, is posted and updated. The broken stream's message is
        rewritten once Slack said it streams no more (stopped, or `code` says so); else it is kept as it is."""
        self.handover = broken
        stream = self.streams[broken] if broken < len(self.streams) else _Stream()
        ended = code in (NOT_STREAMING, STOPPED_BY_USER)
        if stream.ts and not stream.stopped:  # an append failed: end the stream before rewriting it
            stream.stopped = True
            try:
                self.client.chat_stopStream(channel=self.place.channel_id, ts=stream.ts,
                                            session_status=self._session_after(more=True))
                ended = True
            except FAILURES as error:
                log.info("chat.stopStream after a failed append: %s", failure_code(error))
                ended = failure_code(error) in (NOT_STREAMING, STOPPED_BY_USER)
        message = Message(stream.ts, stream.shown) if stream.ts else None
        self.rest = Posted(self.chat, self.place, message if ended else None, None if ended else message)
