"""How often an answer being written is shown anew (chat.appendStream in a fork's thread, chat.update at a
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
