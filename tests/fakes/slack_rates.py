"""Slack's Web API rate limits, as the fake Slack enforces them: on by default, per method per workspace
(docs.slack.dev/apis/web-api/rate-limits), each method's tier from its page (slack_spec/web_api_tiers.json).

- Tier 1, 2, 3, 4: at most 1, 20, 50, 100 calls of a method in any 60 s per workspace (the page's "1+", "20+",
  "50+", "100+ per minute", its windows "per minute"); a burst up to that number is taken at once.
- chat.postMessage (Special): about one a second per channel, short bursts allowed — a burst of POST_BURST,
  then one a second (the page names no burst size; POST_BURST is the fake's reading of "short bursts >1").
  Other Special methods, and methods whose page names no tier, are not limited: their pages give no number.
- A commercially distributed app outside the Marketplace (`non_marketplace`): conversations.replies and
  conversations.history once a minute, at most 15 messages a page (docs.slack.dev/changelog/
  2025-05-terms-rate-limit-update-and-faq).
- Over the limit: HTTP 429, `{"ok": false, "error": "ratelimited"}` and `Retry-After`, the whole seconds until
  the call would be taken. A refused call counts for nothing.

The clock is the limiter's own (`clock`): tests move it by hand (`advance`) or run it faster (`speed`: a
minute of the fake's passes in 60 / speed real seconds, and Retry-After says real seconds), so a test of the
once-a-minute rule need not wait a minute. A test that needs more calls than a tier allows gets an
`allowance` for that method, whose reason it states.
"""
from __future__ import annotations

import json
import math
import threading
import time
from collections import deque
from pathlib import Path

TIERS = json.loads((Path(__file__).resolve().parent / "slack_spec" / "web_api_tiers.json").read_text())["tiers"]
PER_MINUTE = {"tier1": 1, "tier2": 20, "tier3": 50, "tier4": 100}
WINDOW = 60.0  # seconds: Slack's rate-limit windows are per minute
POST_BURST = 5  # chat.postMessage calls one channel takes at once before one a second
POST_EVERY = 1.0
NON_MARKETPLACE = {"conversations.replies": 1, "conversations.history": 1}  # a minute
NON_MARKETPLACE_PAGE = 15
RATELIMITED = {"ok": False, "error": "ratelimited"}


class RateClock:
    """Seconds as the limiter counts them."""

    def __init__(self, speed: float = 1.0):
        self.speed = speed
        self._start = time.monotonic()
        self._moved = 0.0
        self._lock = threading.Lock()

    def now(self) -> float:
        with self._lock:
            return (time.monotonic() - self._start) * self.speed + self._moved

    def advance(self, seconds: float) -> None:
        with self._lock:
            self._moved += seconds

    def real(self, seconds: float) -> float:
        """A wait of this clock's seconds, in real seconds."""
        return seconds / self.speed


class RateLimits:
    def __init__(self, clock: RateClock | None = None):
        self.on = True
        self.non_marketplace = False
        self.clock = clock or RateClock()
        self.allowances: dict[str, tuple[int, str]] = {}  # method → (calls a minute, why the test needs them)
        self._taken: dict[tuple[str, ...], deque[float]] = {}  # (team, method) → when calls were taken
        self._buckets: dict[tuple[str, ...], tuple[float, float]] = {}  # (team, method, channel) → (calls left, when)
        self._lock = threading.Lock()

    def allow(self, method: str, per_minute: int, why: str) -> None:
        """A test's documented higher allowance for one method (every workspace)."""
        if not why.strip():
            raise ValueError("an allowance states why the test needs it")
        self.allowances[method] = (per_minute, why)

    def per_minute(self, method: str) -> int | None:
        if method in self.allowances:
            return self.allowances[method][0]
        if self.non_marketplace and method in NON_MARKETPLACE:
            return NON_MARKETPLACE[method]
        tier = TIERS.get(method)
        return PER_MINUTE.get(tier) if isinstance(tier, str) else tier

    def retry_after(self, method: str, team_id: str | None, args: dict) -> int | None:
        """None when Slack takes the call now (and it is counted); else the Retry-After seconds."""
        if not self.on or team_id is None:
            return None
        if method == "chat.postMessage" and method not in self.allowances:
            return self._bucket((team_id, method, str(args.get("channel"))))
        limit = self.per_minute(method)
        return None if limit is None else self._take((team_id, method), limit, WINDOW)

    def page_args(self, method: str, args: dict) -> dict:
        """The arguments as Slack reads them: outside the Marketplace a page holds 15 messages at most."""
        if self.on and self.non_marketplace and method in NON_MARKETPLACE:
            try:
                asked = int(args.get("limit") or 0)
            except (TypeError, ValueError):
                asked = 0
            return {**args, "limit": NON_MARKETPLACE_PAGE if asked <= 0 else min(asked, NON_MARKETPLACE_PAGE)}
        return args

    def _take(self, key: tuple[str, ...], limit: int, window: float) -> int | None:
        """At most `limit` calls in any `window` seconds (a burst of `limit`, then one every window / limit on
        average)."""
        with self._lock:
            now = self.clock.now()
            taken = self._taken.setdefault(key, deque())
            while taken and taken[0] <= now - window:
                taken.popleft()
            if len(taken) < limit:
                taken.append(now)
                return None
            wait = taken[0] + window - now
        return max(1, math.ceil(self.clock.real(wait) - 1e-9))

    def _bucket(self, key: tuple[str, ...]) -> int | None:
        """POST_BURST calls at once, then one every POST_EVERY seconds."""
        with self._lock:
            now = self.clock.now()
            left, then = self._buckets.get(key, (float(POST_BURST), now))
            left = min(float(POST_BURST), left + (now - then) / POST_EVERY)
            if left >= 1.0:
                self._buckets[key] = (left - 1.0, now)
                return None
            self._buckets[key] = (left, now)
            wait = (1.0 - left) * POST_EVERY
        return max(1, math.ceil(self.clock.real(wait) - 1e-9))
