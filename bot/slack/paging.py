"""An answer's pages: cut under Slack's size limits (`Pager`), shown anew at a pace many answers at once can
keep (`Pacing`), and kept in messages posted and updated in place (`Posted`).

## Pages

A growing answer is cut into Slack messages under a size limit, append-only. Text only ever grows. Pages are filled in order; once a page is sealed it never changes, and the
part of the open page already shown is never taken back, so streamed messages (which can only be
appended to) and updated ones (chat.update) can share this logic. A page that ends inside a code
fence is closed with ``` and the next page reopens the fence with the same info string, so every
message renders on its own and, fences aside, nothing is repeated or lost.

## Pace

How often an answer being written is shown anew (chat.appendStream in a fork's thread, chat.update at a
top level), so that many answers at once stay within Slack's rate limits and the process's CPU.

- One answer alone: at most every `floor` seconds (1.5 s for a stream, 1 s for an update), as always.
- Many at once in one workspace (Slack's limits are per workspace): each is shown less often, so that
  together this process makes about `per_second` such calls a second there — 200 answers at 10 a second
  show each one's new words every 20 s. Slack's own SDKs buffer a stream for the same reason (256
  characters by default, "to avoid rate limits").
- Never past Slack's tiers (per method per workspace, docs.slack.dev/apis/web-api/rate-limits): a kind of
  showing is paced to `TIER_SHOWS` a minute at most there — chat.update (Tier 3, 50 a minute) 45, so one
  top-level answer alone updates every 1.33 s and finals and root refreshes keep room; chat.appendStream
  (Tier 4, 100 a minute) 90. Answers of each kind are counted apart.
- Never held: an answer's first words (chat.startStream, the first post) and its end (chat.stopStream, the
  final update), so the first token is as quick and the finished answer as complete as with one answer.
An answer counts from when its reply begins until it finishes or fails (`ended`, once).

## Posted and updated

An answer kept in messages posted with chat.postMessage and rewritten with chat.update (`Posted`): a
channel's top-level answers (reply.py), and the rest of a fork answer whose stream broke (thread_reply.py).

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
import threading
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from ..services.ports import Place
from .clients import FAILURES, failure_code

if TYPE_CHECKING:
    from .gateway import SlackChat

log = logging.getLogger(__name__)

SHOWS_PER_SECOND = 10.0  # THREADFORK_STREAM_UPDATES_PER_SECOND's default
UPDATE, APPEND = "chat.update", "chat.appendStream"
TIER_SHOWS = {UPDATE: 45.0, APPEND: 90.0}  # a minute per workspace: under Tier 3's 50 and Tier 4's 100


class Pacing:
    def __init__(self, per_second: float = SHOWS_PER_SECOND):
        self.per_second = per_second
        self._writing: Counter[tuple[str, str]] = Counter()  # (team, kind) → answers being written in this process
        self._lock = threading.Lock()

    def began(self, team_id: str, kind: str = APPEND) -> None:
        with self._lock:
            self._writing[team_id, kind] += 1

    def ended(self, team_id: str, kind: str = APPEND) -> None:
        with self._lock:
            self._writing[team_id, kind] -= 1
            if self._writing[team_id, kind] <= 0:
                del self._writing[team_id, kind]

    def interval(self, team_id: str, floor: float, kind: str = APPEND) -> float:
        """Seconds between two showings of one answer of that kind in that workspace now.

        >>> pacing = Pacing(per_second=10); [pacing.began("T1") for _ in range(200)] and None
        >>> pacing.interval("T1", 1.5), pacing.interval("T2", 1.5)
        (133.33333333333334, 1.5)
        >>> pacing.began("T2", UPDATE); pacing.interval("T2", 1.0, UPDATE)
        1.3333333333333333
        """
        per_second = min(self.per_second, TIER_SHOWS[kind] / 60)
        return max(floor, self._writing.get((team_id, kind), 0) / per_second)


FENCE = "```"
_CLOSE = "\n" + FENCE
HOLD_BACK = 400  # within this many units of the limit, show only whole lines


def utf8_size(text: str) -> int:
    return len(text.encode("utf-8"))


def open_fence(text: str) -> str | None:
    """The opening line of the fence `text` ends inside, if any."""
    fence = None
    for line in text.splitlines():
        if line.lstrip().startswith(FENCE):
            fence = None if fence is not None else line.strip()
    return fence


class Pager:
    def __init__(self, limit: int, measure: Callable[[str], int] = len):
        self.limit = limit
        self.measure = measure
        self.pages: list[str] = [""]
        self._start = 0  # offset in the full text where the open page's body begins
        self._prefix = ""  # reopened fence at the top of the open page
        self._shown = 0  # offset in the full text up to which the open page has been shown
        self.starts: list[tuple[int, str]] = [(0, "")]  # per page: where its body begins, the fence it reopens

    def update(self, text: str, final: bool = False) -> list[str]:
        """Fit the whole text so far into pages; returns the pages.

        Near the limit an unfinished last line is held back (until `final`), so that a page
        break falls between lines rather than inside one.
        """
        budget = self.limit - utf8_size(_CLOSE)  # room to close a fence
        while self.measure(self._prefix + text[self._start:]) > budget:
            cut = self._cut(text, budget)
            page = self._prefix + text[self._start:cut]
            fence = open_fence(page)
            if fence:
                page += FENCE if page.endswith("\n") else _CLOSE
            self.pages[-1] = page
            self.pages.append("")
            self._prefix = fence + "\n" if fence else ""
            self._start = self._shown = cut
            self.starts.append((cut, self._prefix))
        shown = len(text)
        if not final and self.measure(self._prefix + text[self._start:]) > budget - min(HOLD_BACK, budget // 4):
            newline = text.rfind("\n", self._shown, len(text))
            space = text.rfind(" ", self._shown, len(text))
            shown = (newline if newline >= 0 else space) + 1 if max(newline, space) >= 0 else self._shown
        self._shown = max(shown, self._shown)
        self.pages[-1] = self._prefix + text[self._start:self._shown]
        return self.pages

    def _cut(self, text: str, budget: int) -> int:
        """Where the open page ends: its last newline that fits, never before what was shown."""
        lo, hi = self._start, len(text)
        while lo < hi:  # the longest body that fits the budget
            mid = (lo + hi + 1) // 2
            if self.measure(self._prefix + text[self._start:mid]) <= budget:
                lo = mid
            else:
                hi = mid - 1
        end = max(lo, self._start + 1)
        for separator in ("\n", " "):  # between lines, else between words
            found = text.rfind(separator, max(self._start, self._shown - 1), end)
            if found >= 0:
                return found + 1
        return self._shown if self._shown > self._start else end


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
