"""Caching, both kinds a request goes through: how long the prompt cache keeps what a request marks
(THREADFORK_CACHE_TTL), and the process's identity memos that render a stored turn once. Pure rules and
in-memory tables, no I/O.

## The prompt cache

The Messages API keeps the prefix up to a `cache_control` breakpoint for 5 minutes (written at 1.25× the
input price) or, with `"ttl": "1h"`, for an hour (written at 2×); a read costs 0.1× either way and
refreshes the entry (platform.claude.com, "Prompt caching"). A channel's conversation stops for
meetings: a 5-minute entry then expires between two turns and the next turn writes the whole prefix again.

A request's breakpoints are of two kinds. The *moving* one sits on its final block and moves on with
every turn. The *settled* ones close history that no later turn changes: an inherited prefix (the
channel's turns up to a fork point, a parent fork's), and a session's own turns before the ones being
answered now. Under each mode:

- `5m`: every breakpoint is the API's default, with no `ttl` field, and there is no settled-history
  breakpoint of the session's own (the bytes Threadfork always sent).
- `1h`: every breakpoint carries `"ttl": "1h"`.
- `auto` (the default): the moving breakpoint takes the TTL that would have cost least over the
  session's recent gaps between people's messages, measured from their Slack timestamps (when they were
  written, not when the bot saw them): `paced`. Settled history is kept an hour (`lasting`) — a fork
  opened after a meeting, or the session itself after one, then reads it back at 0.1× instead of writing
  it again — unless its session's messages come more than an hour apart, when no cache outlives the gap.
  When the moving breakpoint is the hour too, no separate one is needed for the session's own history.
- Within a request a 1-hour breakpoint never follows a 5-minute one (the API refuses that order):
  `settled` lengthens the earlier ones instead.
- The choice never changes the bytes of a cached prefix, only the `cache_control` beside them, so an
  inherited fork still reads its parent's cache whatever either one chose.

## Identity memos: where "the same object" means "the same bytes"

Two caches let a long session cost only its new turns (encoding its request is one orjson call,
~0.6 ms for a 1,000-turn history: bot/llm/claude.py). Both rest on one rule: a turn whose state
can no longer change is handed out as the same immutable object every time, so identity (`is`)
proves equality without comparing a byte.
1. The history cache (bot/store/queue.py) keeps each session's settled turns and returns the same
   Turn objects on every read; a session's version bump (an edit, deletion, retry, or turns removed
   by the retention policy) starts it afresh, in every process. A session deleted outright reads as
   empty, and its id is never given to another session, so nothing cached under it can come back.
2. The render memo (here) renders each Turn object to its Block once, and the prefix memo (here) keeps
   the blocks of a session's settled turns, so the next request renders only the turns after them.
A changed turn is a new object and misses every cache, so nothing can serve stale bytes. Each cache
is bounded (512 sessions; bytes) and forgetting costs one re-render, never correctness.
"""
from __future__ import annotations

import operator
import sys
import threading
from collections import OrderedDict
from collections.abc import Callable, Sequence
from enum import StrEnum
from typing import Generic, TypeVar

from .model import Role, Turn

FIVE_MINUTES = 300.0  # seconds a 5-minute entry lives after its last use
ONE_HOUR = 3600.0
# what the whole cached prefix costs at the next turn, in multiples of the input price (platform.claude.com)
READ, WRITE_5M, WRITE_1H = 0.1, 1.25, 2.0
RECENT = 8  # gaps weighed: enough to remember the last pause across a burst of quick turns


class Ttl(StrEnum):
    FIVE_MINUTES = "5m"
    ONE_HOUR = "1h"


def cache_control(ttl: Ttl) -> dict:
    """A breakpoint as the API takes it: 5 minutes without a `ttl` field, as Threadfork always sent it."""
    return {"type": "ephemeral", "ttl": "1h"} if ttl is Ttl.ONE_HOUR else {"type": "ephemeral"}


class CacheMode(StrEnum):
    AUTO = "auto"
    FIVE_MINUTES = "5m"
    ONE_HOUR = "1h"


def gaps(timestamps: Sequence[float]) -> list[float]:
    """Seconds between consecutive messages, the most recent RECENT (timestamps in the order written)."""
    return [later - earlier for earlier, later in zip(timestamps, timestamps[1:])][-RECENT:]


def paced(recent_gaps: Sequence[float]) -> Ttl:
    """The TTL that would have cost least over these gaps: each gap read at 0.1× if the entry outlived
    it, else the prefix written again at that TTL's rate. A tie (every gap under 5 minutes, or none
    known) is 5 minutes, whose writes cost less.

    >>> paced([60, 60, 1200, 60])  # a burst, a 20-minute meeting, a burst
    <Ttl.ONE_HOUR: '1h'>
    """
    five = sum(READ if gap <= FIVE_MINUTES else WRITE_5M for gap in recent_gaps)
    hour = sum(READ if gap <= ONE_HOUR else WRITE_1H for gap in recent_gaps)
    return Ttl.ONE_HOUR if hour < five else Ttl.FIVE_MINUTES


def outlived(recent_gaps: Sequence[float]) -> bool:
    """Every recent gap was longer than even the hour cache lives."""
    return bool(recent_gaps) and min(recent_gaps) > ONE_HOUR


def chosen(mode: CacheMode, recent_gaps: Sequence[float]) -> Ttl:
    """The moving breakpoint's TTL under the configured mode."""
    if mode is CacheMode.AUTO:
        return paced(recent_gaps)
    return Ttl(mode.value)


def kept(mode: CacheMode, recent_gaps: Sequence[float]) -> Ttl:
    """A settled breakpoint's TTL under the configured mode."""
    if mode is CacheMode.AUTO:
        return Ttl.FIVE_MINUTES if outlived(recent_gaps) else Ttl.ONE_HOUR
    return Ttl(mode.value)


def one_off(mode: CacheMode) -> Ttl:
    """The TTL of a prefix read once and never again (a merge's or a compaction's own request): its
    writes cost least at 5 minutes, unless the operator asked for an hour everywhere."""
    return Ttl.ONE_HOUR if mode is CacheMode.ONE_HOUR else Ttl.FIVE_MINUTES


def settled(ttls: Sequence[Ttl]) -> list[Ttl]:
    """Breakpoints' TTLs in request order, none shorter than one after it (the API's order rule).

    >>> settled([Ttl.FIVE_MINUTES, Ttl.ONE_HOUR, Ttl.FIVE_MINUTES])
    [<Ttl.ONE_HOUR: '1h'>, <Ttl.ONE_HOUR: '1h'>, <Ttl.FIVE_MINUTES: '5m'>]
    """
    out, longest_after = [], Ttl.FIVE_MINUTES
    for ttl in reversed(ttls):
        longest_after = longest(ttl, longest_after)
        out.append(longest_after)
    return out[::-1]


def written_at(slack_ts: str | None) -> float | None:
    """A Slack message ts as seconds since the epoch (None when absent or not a ts)."""
    try:
        return float(slack_ts) if slack_ts else None
    except ValueError:
        return None


def pace(turns: Sequence[Turn]) -> list[float]:
    """The recent gaps between people's messages among these turns of one session (read from the end: a
    long session costs no more than a short one)."""
    written: list[float] = []
    for turn in reversed(turns):
        if turn.role is Role.USER and turn.author_id and (at := written_at(turn.slack_ts)) is not None:
            written.append(at)
            if len(written) > RECENT:
                break
    return gaps(written[::-1])


def closing(mode: CacheMode, turns: Sequence[Turn]) -> Ttl:
    """The moving breakpoint's TTL for a session whose turns these are."""
    return chosen(mode, pace(turns) if mode is CacheMode.AUTO else ())


def lasting(mode: CacheMode, turns: Sequence[Turn]) -> Ttl:
    """The TTL of a settled breakpoint closing these turns of one session."""
    return kept(mode, pace(turns) if mode is CacheMode.AUTO else ())


def own_history(mode: CacheMode, turns: Sequence[Turn], moving: Ttl) -> Ttl | None:
    """The TTL of a breakpoint on the session's own settled history, if one is worth having: only under
    `auto`, only when the moving breakpoint lives shorter than that history would."""
    if mode is not CacheMode.AUTO:
        return None
    ttl = lasting(mode, turns)
    return ttl if ttl is Ttl.ONE_HOUR and moving is Ttl.FIVE_MINUTES else None


def longest(*ttls: Ttl) -> Ttl:
    return Ttl.ONE_HOUR if Ttl.ONE_HOUR in ttls else Ttl.FIVE_MINUTES


Key = TypeVar("Key")
Value = TypeVar("Value")


class IdentityMemo(Generic[Key, Value]):
    """`compute(key)` once per key object, up to `budget` bytes of keys and values (what
    sys.getsizeof reports for their `text`), oldest entries forgotten first. An entry keeps its key
    alive, so the key's id cannot be reused by another object while it is remembered."""

    def __init__(self, compute: Callable[[Key], Value], budget: int = 64 << 20):
        self.compute = compute
        self.budget = budget
        self.size = 0
        self._items: OrderedDict[int, tuple[Key, Value, int]] = OrderedDict()
        self._lock = threading.Lock()

    def __call__(self, key: Key) -> Value:
        hit = self._items.get(id(key))
        if hit is not None and hit[0] is key:
            return hit[1]
        value = self.compute(key)
        cost = _cost(key) + _cost(value)
        with self._lock:
            if id(key) not in self._items:
                self._items[id(key)] = (key, value, cost)
                self.size += cost
            while self.size > self.budget and self._items:
                _, (_, _, dropped) = self._items.popitem(last=False)
                self.size -= dropped
        return value


class PrefixMemo(Generic[Key, Value]):
    """Values remembered for sequences of objects, found again for any sequence that starts with the very
    same objects (`is`, element by element): a session's history is its last one plus new turns. Up to
    `per_start` sequences for each first object (a parent and the forks that inherit part of it start alike),
    up to `budget` elements in all, the least recently used first start forgotten first."""

    def __init__(self, per_start: int = 4, budget: int = 1 << 20):
        self.per_start, self.budget = per_start, budget
        self.size = 0
        self._starts: OrderedDict[int, list[tuple[tuple[Key, ...], Value]]] = OrderedDict()
        self._lock = threading.Lock()

    def longest(self, items: Sequence[Key], limit: int) -> tuple[int, Value] | None:
        """The longest remembered sequence that `items[:limit]` starts with: its length and value."""
        if not limit:
            return None
        best = None
        for remembered, value in self._starts.get(id(items[0]), ()):
            if (len(remembered) <= limit and (best is None or len(remembered) > best[0])
                    and all(map(operator.is_, remembered, items))):
                best = (len(remembered), value)
        return best

    def remember(self, items: Sequence[Key], value: Value) -> None:
        """Keep `value` for `items`; it replaces a remembered sequence `items` extends."""
        if not items:
            return
        kept = tuple(items)
        with self._lock:
            # a copy: a reader may be walking the published list (an entry keeps its first object, so its id, alive)
            entries = list(self._starts.pop(id(kept[0]), ()))
            for i, (remembered, _) in enumerate(entries):
                if len(remembered) <= len(kept) and all(map(operator.is_, remembered, kept)):
                    self.size -= len(entries.pop(i)[0])
                    break
            entries.append((kept, value))
            self.size += len(kept)
            while len(entries) > self.per_start:
                self.size -= len(entries.pop(0)[0])
            self._starts[id(kept[0])] = entries
            while self.size > self.budget and self._starts:
                _, dropped = self._starts.popitem(last=False)
                self.size -= sum(len(remembered) for remembered, _ in dropped)


def _cost(item) -> int:
    """Bytes an item holds: its text (or its parts' texts), and its slot in the table."""
    if isinstance(item, tuple):
        return sum(_cost(part) for part in item)
    return sys.getsizeof(getattr(item, "text", "")) + 64
