"""Identity caches: where "the same object" means "the same bytes".

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
from typing import Generic, TypeVar

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
