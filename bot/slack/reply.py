"""Delivering Claude's answer to Slack while it is being written: what every reply does (`BaseReply`), a
channel's top-level answer (`ChannelReply`), the 👀 while Claude thinks, and the controls under an answer.
A fork's answer streams in its thread (thread_reply.py); long answers continue in further messages of the same
place (paging.py).

- At a channel's top level (where streams need a thread) a message is posted with the answer's first words and
  updated with chat.update at most about once a second (paging.py: Posted), with a Stop button under it while it
  is written (`stop_answer`, naming the answer's stored turn) — also while Claude thinks before any word. The final
  update trades Stop for the feedback buttons.
- Its first words wait for the answer's next event (more words, research, its end): an answer that arrives
  whole is posted once, finished, as soon as its stop reason comes (not once the stream has closed) — with no
  Stop to take away again.
- An 👀 reaction on the person's message says Claude is thinking while no text is visible yet, except in a fork
  whose agent session says so itself (gateway.begin_reply). It appears only if no text is visible after
  THINKING_DELAY (a fast answer never flickers it, and costs no reactions.* calls), and goes as soon as the first
  words are visible. Its Slack calls run on a small pool (Reactions), never on the reply's thread; a removal is
  chained after its add, never before it.
- Once Claude has thought for THINKING_NOTE seconds with nothing shown, a top-level answer's own message is posted
  saying "Thinking…" with its Stop button, so a long think can be stopped before any word; the words replace that
  line as they come. The note is a delayed call on the reactions' pool (Reactions.later): it and the reading
  thread take turns on the message (one lock), so the answer is never posted twice, and a finished answer gets no
  note. Unlike the use cases' Later port, its cancel never waits for a call under way: the reply cancels while
  holding the lock the call takes.

Invariants, whatever Slack refuses or fails on (after the retries in clients.py):
- write() and finish() never raise for Slack's sake: a failed call never costs Claude's answer.
- finish() returns the ts of every message that holds part of the answer.
"""
from __future__ import annotations

import logging
import threading
import time
from collections.abc import Callable
from concurrent.futures import Executor, Future
from datetime import datetime, timedelta, timezone
from typing import TYPE_CHECKING

from apscheduler.jobstores.base import JobLookupError
from apscheduler.schedulers.base import BaseScheduler
from slack_sdk.errors import SlackApiError
from slack_sdk.web import WebClient

from ..domain.text import settled
from ..infrastructure import metrics
from ..services.ports import Place, Source
from .paging import UPDATE, Posted
from .research import status_line, task_title

if TYPE_CHECKING:
    from .gateway import SlackChat

log = logging.getLogger(__name__)

UPDATE_INTERVAL = 1.0  # seconds between chat.update calls (Slack's guidance: about once a second)
THINKING = "eyes"
THINKING_DELAY = 0.5  # seconds without visible text before the reaction appears
THINKING_NOTE = 1.5  # seconds Claude thinks with nothing shown before the answer's message says so
THINKING_LINE = "_💭 Thinking…_"
CARRY_ON_ACTION = "answer_continue"  # under an answer cut at its length limit: carry it on
FEEDBACK_ACTION = "answer_feedback"
STOP_ACTION = "stop_answer"  # a top-level answer's Stop, while it streams


def feedback_block() -> dict:
    """Slack's 👍/👎 under an answer or a summary; a press is stored once per person and message."""
    def vote(text: str, value: str) -> dict:
        return {"text": {"type": "plain_text", "text": text}, "value": value, "accessibility_label": text}

    return {"type": "context_actions", "elements": [{
        "type": "feedback_buttons", "action_id": FEEDBACK_ACTION,
        "positive_button": vote("Good answer", "good"), "negative_button": vote("Bad answer", "bad")}]}


def stop_block(reply_id: int) -> dict:
    """The Stop button under a top-level answer while it streams; its value names the answer's stored turn."""
    return {"type": "actions", "block_id": "answer_stop", "elements": [_button("Stop", STOP_ACTION, str(reply_id))]}


def carry_on_block(value: str) -> dict:
    """The Continue button under a cut answer; its value names the session and the answer."""
    return {"type": "actions", "block_id": "answer_continue",
            "elements": [{**_button("Continue", CARRY_ON_ACTION, value), "style": "primary"}]}


def _button(label: str, action_id: str, value: str) -> dict:
    return {"type": "button", "text": {"type": "plain_text", "text": label}, "action_id": action_id, "value": value}


class BaseReply:
    floor = UPDATE_INTERVAL  # seconds between showings at the least; more while many answers are written (paging.py: Pacing)
    kind = UPDATE  # the call that shows it anew, whose tier paces it

    def __init__(self, chat: SlackChat, place: Place, clock: Callable[[], float] = time.monotonic,
                 thinking: bool = True):
        """`thinking`: the 👀 reaction while no text is visible (left out where something else says so)."""
        self.chat = chat
        self.place = place
        self.clock = clock
        self.text = ""
        self._last_flush: float | None = None
        self.client = chat.client_for(place.team_id)  # ChatUnavailable when the team has no installation
        self.thinking = chat.reactions.thinking(self.client, place.channel_id,
                                                (place.reply_to_ts or place.thread_ts) if thinking else None)
        self.researching: dict[str, str] = {}  # tool id → its title, while Claude's web research runs
        self.outputs: dict[str, str] = {}  # tool id → the one-line result a finished connector call shows
        self.closing = [feedback_block()]  # under the answer's last message: 👍/👎
        self._writing = True  # counted by the workspace's pacing until it finishes or fails
        self.timing = AnswerTiming()
        chat.pacing.began(place.team_id, self.kind)

    @property
    def ts(self) -> list[str]:
        raise NotImplementedError

    def write(self, delta: str) -> None:
        self.text += delta
        now = self.clock()
        last = self._last_flush
        if last is None or now - last >= self.chat.pacing.interval(self.place.team_id, self.floor, self.kind):
            if self._flush(final=False):
                self._last_flush = now
                if self.ts:
                    self.thinking.stop()
                    self.timing.shown()

    def tool_started(self, tool_id: str, name: str, detail: str) -> None:
        self.researching[tool_id] = task_title(name, detail)
        self._research(tool_id, "in_progress", [])

    def tool_finished(self, tool_id: str, sources: list[Source], failed: bool, output: str = "") -> None:
        self.outputs[tool_id] = output
        self._research(tool_id, "error" if failed else "complete", sources)
        self.researching.pop(tool_id, None)

    def _research(self, tool_id: str, status: str, sources: list[Source]) -> None:
        """Show research under way (never at the cost of the answer: failures are logged only)."""
        raise NotImplementedError

    def _status_line(self) -> str:
        return status_line(list(self.researching.values())[-1]) if self.researching else ""

    def thinking_started(self) -> None:
        """Claude thinks before it writes: the 👀 (or a fork's agent session) says so already."""

    def ended(self) -> None:
        """The words are all written; a fork's stream still ends at `finish`, its tail riding on chat.stopStream."""

    def finish(self, tail: str = "", carry_on: str | None = None) -> list[str]:
        """`tail` is never streamed on its own: it rides on the last call (chat.stopStream, the last update)."""
        if carry_on is not None:
            self.closing = [carry_on_block(carry_on), *self.closing]
        self._ended()
        self.researching.clear()
        self.text += tail
        if not self.text.strip():  # an empty answer still gets a visible reply
            self.text = "_(Claude returned an empty answer.)_"
        self._flush(final=True)
        self.thinking.stop()
        self.timing.finished()
        return self.ts

    def fail(self, notice: str) -> None:
        self._ended()
        if self.ts:
            self.text += f"\n\n{notice}"
            self._flush(final=True)
        else:
            self.chat.call(self.place.team_id, "chat_postMessage", channel=self.place.channel_id,
                           thread_ts=self.place.thread_ts, text=notice)
        self.thinking.stop()

    def _ended(self) -> None:
        if self._writing:
            self._writing = False
            self.chat.pacing.ended(self.place.team_id, self.kind)

    def _flush(self, final: bool) -> bool:
        visible = self.chat.markdown(self.place.team_id, self.text if final else settled(self.text))
        if not visible and not self.researching:
            return False
        self._deliver(visible, final)
        return bool(visible)

    def _deliver(self, visible: str, final: bool) -> None:
        raise NotImplementedError


class ChannelReply(BaseReply):
    """A channel's top-level answer: posted with its first words, updated in place, Stop under it while written."""

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


class AnswerTiming:
    """One answer's clock: its first visible words and its end, each observed once."""

    def __init__(self):
        self.began = time.monotonic()
        self._shown = False

    def shown(self) -> None:
        if not self._shown:
            self._shown = True
            metrics.FIRST_WORDS_SECONDS.observe(time.monotonic() - self.began)

    def finished(self) -> None:
        self.shown()
        metrics.ANSWER_SECONDS.observe(time.monotonic() - self.began)


class Reactions:
    """What every reply's 👀 runs on, made and stopped by the composition root (bot/app.py, bot/entrypoints/runtime.py):
    the process's scheduler times the delay (hundreds of replies, no thread apiece), `calls` sends them."""

    def __init__(self, timer: BaseScheduler, calls: Executor, delay: float = THINKING_DELAY):
        self.timer = timer
        self.calls = calls
        self.delay = delay

    def thinking(self, client: WebClient, channel_id: str, ts: str | None) -> Thinking:
        """The 👀 of one reply, on the message `ts` (None: no reaction)."""
        return Thinking(client, channel_id, ts, self)

    def later(self, delay: float, call: Callable[[], None]) -> DelayedCall:
        """`call` on the pool once `delay` seconds have passed (the scheduler only times it), unless cancelled."""
        return DelayedCall(self, delay, call)


class DelayedCall:
    def __init__(self, reactions: Reactions, delay: float, call: Callable[[], None]):
        self._calls = reactions.calls
        self._call = call
        self._cancelled = False
        self._due = reactions.timer.add_job(self._submit, "date", misfire_grace_time=None,
                                            run_date=datetime.now(timezone.utc) + timedelta(seconds=delay))

    def cancel(self) -> None:
        """No call from now on, if it is not under way already (the call checks what it still has to do)."""
        if self._cancelled:
            return
        self._cancelled = True
        try:
            self._due.remove()
        except JobLookupError:  # it ran, or the scheduler has stopped
            pass

    def _submit(self) -> None:
        try:
            self._calls.submit(self._call)
        except RuntimeError:  # the pool is closed: the process is leaving
            log.info("a delayed reply call was dropped: the process is stopping")


class Thinking:
    def __init__(self, client: WebClient, channel_id: str, ts: str | None, reactions: Reactions):
        self.client = client
        self.channel_id = channel_id
        self.ts = ts
        self.calls = reactions.calls
        self._lock = threading.Lock()
        self._over = False
        self._added: Future | None = None
        self._due = None  # the scheduled add, until it runs or the reply no longer needs it
        if ts:
            self._due = reactions.timer.add_job(self._add, "date", misfire_grace_time=None,
                                                run_date=datetime.now(timezone.utc) + timedelta(seconds=reactions.delay))

    def stop(self) -> None:
        """Text is visible (or the reply ended): no reaction from now on; remove one already added."""
        with self._lock:
            if self._over:
                return
            self._over = True
            added, due, self._due = self._added, self._due, None
        if added is not None:
            added.add_done_callback(lambda done: done.result() and self.calls.submit(self._call, "reactions_remove"))
        elif due is not None:  # a fast answer: its add need not wake the scheduler at all
            try:
                due.remove()
            except JobLookupError:  # running now (it will see the reply over) or the scheduler has stopped
                pass

    def _add(self) -> None:
        with self._lock:
            if not self._over:
                self._added = self.calls.submit(self._call, "reactions_add")

    def _call(self, method: str) -> bool:
        try:
            getattr(self.client, method)(channel=self.channel_id, timestamp=self.ts, name=THINKING)
            return True
        except SlackApiError as error:
            log.info("%s %s failed: %s", method, THINKING, error.response.get("error"))
            return False
        except Exception:  # noqa: BLE001 - a reaction is never worth failing a reply for
            log.exception("%s %s failed", method, THINKING)
            return False
