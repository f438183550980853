"""The Messages API's prompt cache, as https://platform.claude.com/docs/en/build-with-claude/prompt-caching
documents it, on a clock the tests move (no waiting).

- A request's prompt is its `tools`, then `system`, then `messages`, block by block. A `cache_control`
  breakpoint caches the prefix up to and including its block; an entry is keyed by the model and that
  prefix's content — the `cache_control` markers themselves are not content, so a prefix marked `"1h"`
  and one marked `"5m"` are the same entry.
- Lookback: at each breakpoint the cache is checked at its block and at the block boundaries before it,
  20 blocks in all; the longest prefix found is the hit ("A"). Entries are never made at a boundary
  without a breakpoint.
- A prefix shorter than the model's minimum cacheable length is not cached (no error, nothing reported).
- Lifetimes: 5 minutes, or 1 hour with `"ttl": "1h"`, from the entry's last use; a hit refreshes the entry
  at no cost. (Where the page is silent the fake chooses: a hit at a block now marked with a longer TTL is
  kept that longer.)
- Writes and billing ("Mixing different TTLs"): A is read; the 1-hour breakpoints after A are written up to
  the last of them ("B") as 1-hour tokens; the rest up to the last breakpoint ("C") as 5-minute tokens.
  `usage`: `cache_read_input_tokens` = A, `cache_creation_input_tokens` = C − A with `cache_creation`
  split into `ephemeral_1h_input_tokens` = B − A and `ephemeral_5m_input_tokens` = C − B, and
  `input_tokens` = the tokens after the last breakpoint (everything else).

Tokens are the fake's estimate: each block's JSON (media payloads and `cache_control` left out) at 4
characters a token, plus media_rules' count for images and PDFs, plus a few tokens per message.
"""
from __future__ import annotations

import hashlib
import json
import threading
import time
from dataclasses import dataclass

import orjson

from .media_rules import _media_tokens, _without_payload

LOOKBACK = 20  # blocks checked at each breakpoint, its own included
LIFETIMES = {"5m": 300.0, "1h": 3600.0}
MESSAGE_OVERHEAD = 3  # tokens of a message's role and framing
# minimum cacheable prompt length, by model id prefix (the page's table; models it does not list: DEFAULT_MINIMUM)
MINIMUMS = {"claude-opus-4-5": 4096, "claude-opus-4-6": 4096, "claude-haiku-4-5": 4096, "claude-opus-4-7": 2048,
            "claude-opus-5": 512, "claude-fable-5": 512, "claude-mythos-5": 512}
DEFAULT_MINIMUM = 1024


@dataclass
class Entry:
    tokens: int
    ttl: str
    expires: float


@dataclass(frozen=True)
class Boundary:
    """The prompt up to and including one block: its key, its size, and the block's breakpoint TTL (if any)."""

    key: str
    tokens: int
    ttl: str | None


class Clock:
    """Seconds; real time plus what the test moved it on."""

    def __init__(self):
        self.offset = 0.0
        self.fixed: float | None = None  # set: the clock stands still there (a bench plays a day on it)

    def __call__(self) -> float:
        return (self.fixed if self.fixed is not None else time.time()) + self.offset

    def advance(self, seconds: float = 0.0, minutes: float = 0.0) -> None:
        self.offset += seconds + 60 * minutes


class PromptCache:
    def __init__(self, clock: Clock | None = None):
        self.clock = clock or Clock()
        self.entries: dict[str, Entry] = {}
        self._lock = threading.Lock()

    def clear(self) -> None:
        with self._lock:
            self.entries.clear()

    def use(self, request: dict, files=None) -> dict:
        """Serve one request as the API does: read what it hits, write what its breakpoints mark; its usage."""
        boundaries, total = prompt_boundaries(request, files or {})
        minimum = minimum_tokens(request.get("model") or "")
        marked = [i for i, b in enumerate(boundaries) if b.ttl is not None]
        with self._lock:
            now = self.clock()
            hit = self._longest_hit(boundaries, marked, now)
            read = boundaries[hit].tokens if hit is not None else 0
            if hit is not None:
                entry = self.entries[boundaries[hit].key]
                ttl = "1h" if "1h" in (entry.ttl, boundaries[hit].ttl) else "5m"
                entry.ttl, entry.expires = ttl, now + LIFETIMES[ttl]
            written = [i for i in marked if boundaries[i].tokens > read and boundaries[i].tokens >= minimum]
            for i in written:
                b = boundaries[i]
                self.entries[b.key] = Entry(b.tokens, b.ttl, now + LIFETIMES[b.ttl])
        last = boundaries[written[-1]].tokens if written else read
        hour = max((boundaries[i].tokens for i in written if boundaries[i].ttl == "1h"), default=read)
        return {"input_tokens": max(0, total - last), "cache_read_input_tokens": read,
                "cache_creation_input_tokens": last - read,
                "cache_creation": {"ephemeral_5m_input_tokens": last - hour, "ephemeral_1h_input_tokens": hour - read}}

    def _longest_hit(self, boundaries: list[Boundary], marked: list[int], now: float) -> int | None:
        hits = []
        for i in marked:  # each breakpoint looks back over its own block and the 19 before it
            found = next((j for j in range(i, max(-1, i - LOOKBACK), -1)
                          if (entry := self.entries.get(boundaries[j].key)) is not None and entry.expires > now), None)
            if found is not None:
                hits.append(found)
        return max(hits, default=None)


def minimum_tokens(model: str) -> int:
    matches = [key for key in MINIMUMS if model == key or model.startswith(key + "-")]
    return MINIMUMS[max(matches, key=len)] if matches else DEFAULT_MINIMUM


def prompt_boundaries(request: dict, files) -> tuple[list[Boundary], int]:
    """Every block boundary of the prompt in the API's order, with the prompt's total tokens."""
    model = request.get("model") or ""
    digest = hashlib.sha256(json.dumps([model, request.get("mcp_servers")], sort_keys=True).encode())
    boundaries, tokens = [], 0

    def add(block: dict, prefix: str) -> None:
        nonlocal tokens
        content = _without_payload({k: v for k, v in block.items() if k != "cache_control"})
        text = orjson.dumps(content, option=orjson.OPT_SORT_KEYS)  # a long history is thousands of blocks
        digest.update(prefix.encode() + text)
        tokens += len(text) // 4 + _media_tokens(block, files)
        control = block.get("cache_control")
        ttl = control.get("ttl", "5m") if isinstance(control, dict) else None
        boundaries.append(Boundary(digest.copy().hexdigest(), tokens, ttl))

    for tool in request.get("tools") or []:
        add(tool, "tool:")
    system = request.get("system")
    for block in [{"type": "text", "text": system}] if isinstance(system, str) else system or []:
        add(block, "system:")
    for message in request.get("messages") or []:
        tokens += MESSAGE_OVERHEAD
        content = message.get("content")
        for n, block in enumerate([{"type": "text", "text": content}] if isinstance(content, str) else content or []):
            add(block, f"{message.get('role')}:{n}:")  # where a message starts is part of the content
    return boundaries, tokens
