"""Cut a growing answer into Slack messages under a size limit, append-only.

Text only ever grows. Pages are filled in order; once a page is sealed it never changes, and the
part of the open page already shown is never taken back, so streamed messages (which can only be
appended to) and updated ones (chat.update) can share this logic. A page that ends inside a code
fence is closed with ``` and the next page reopens the fence with the same info string, so every
message renders on its own and, fences aside, nothing is repeated or lost.

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
"""
from __future__ import annotations

import threading
from collections import Counter
from collections.abc import Callable


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
