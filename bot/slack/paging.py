"""Cut a growing answer into Slack messages under a size limit, append-only.

Text only ever grows. Pages are filled in order; once a page is sealed it never changes, and the
part of the open page already shown is never taken back, so streamed messages (which can only be
appended to) and updated ones (chat.update) can share this logic. A page that ends inside a code
fence is closed with ``` and the next page reopens the fence with the same info string, so every
message renders on its own and, fences aside, nothing is repeated or lost.
"""
from __future__ import annotations

from collections.abc import Callable

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
