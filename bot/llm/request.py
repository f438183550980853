"""Turn a domain ModelInput into the Messages API request body. Pure: no SDK import."""
from __future__ import annotations

import threading
from collections import OrderedDict
from dataclasses import dataclass

import orjson

from ..domain.context import Block, ModelInput, cache_control
from ..domain.pricing import takes_effort

KEPT_PER_START = 8  # encodings kept per first block: a channel's parent and its inherited forks share one


# Anthropic's server tools, by the names THREADFORK_TOOLS uses: Claude searches and fetches the web
# itself, within one request (its results come back in the stream; see reading.py)
SERVER_TOOLS = {"web_search": "web_search_20250305", "web_fetch": "web_fetch_20250910"}


def server_tools(names: tuple[str, ...], max_uses: int) -> list[dict]:
    """The `tools` of a request: each named server tool, capped at `max_uses` uses per request."""
    return [{"type": SERVER_TOOLS[name], "name": name, "max_uses": max_uses} for name in names]


# the Messages API's MCP connector (platform.claude.com "MCP connector"): the API calls the remote
# servers itself during the answer; the request names them and says which of their tools Claude may use
MCP_BETA = "mcp-client-2026-09-15"


def mcp_servers(model_input: ModelInput) -> list[dict]:
    """`mcp_servers`: each connector with its token, if it has one (read just now, never stored)."""
    servers = []
    for connector in model_input.connectors:
        server = {"type": "url", "url": connector.url, "name": connector.name}
        token = model_input.tokens.get(connector.name)
        servers.append({**server, "authorization_token": token} if token else server)
    return servers


def mcp_toolsets(model_input: ModelInput) -> list[dict]:
    """One `mcp_toolset` per connector: every tool, or only the allowed ones (all off, those on)."""
    toolsets = []
    for connector in model_input.connectors:
        toolset = {"type": "mcp_toolset", "mcp_server_name": connector.name}
        if connector.allowed_tools is not None:
            toolset["default_config"] = {"enabled": False}
            toolset["configs"] = {name: {"enabled": True} for name in connector.allowed_tools}
        toolsets.append(toolset)
    return toolsets


def build_request(model: str, max_tokens: int, model_input: ModelInput, tools: list[dict] | None = None,
                  tool_max_uses: int = 5) -> dict:
    """The request as a dict (the reference RequestEncoder's bytes are checked against); a channel's
    own model and tools in `model_input` win over the configured ones."""
    if model_input.tools is not None:
        tools = server_tools(model_input.tools, tool_max_uses)
    request = {
        "model": model_input.model or model,
        "max_tokens": max_tokens,
        **output_config(model_input.model or model, model_input.effort),
        "system": _system(model_input),
        "messages": model_input.messages(),
        "stream": True,
    }
    tools = [*(tools or ()), *mcp_toolsets(model_input)]
    if model_input.connectors:
        request["mcp_servers"] = mcp_servers(model_input)
    return {**request, "tools": tools} if tools else request


def output_config(model: str, effort: str | None) -> dict:
    """`output_config.effort` (platform.claude.com "Effort"): low, medium or high for a model that takes it;
    nothing for the API's default or a model that takes no effort (it would answer 400)."""
    if not effort or effort == "default" or not takes_effort(model):
        return {}
    return {"output_config": {"effort": effort}}


def _system(model_input: ModelInput) -> list[dict]:
    return [{"type": "text", "text": model_input.system, "cache_control": cache_control(model_input.system_ttl)}]


@dataclass(frozen=True)
class _Encoded:
    """Encoded messages: `blocks` rendered as `data`; `ends` lists, per message, how many blocks and
    bytes lie up to its end."""

    blocks: tuple[Block, ...]
    data: bytes
    ends: tuple[tuple[int, int], ...]


class RequestEncoder:
    """Encodes streaming requests as JSON bytes (orjson: a 1,000-turn history in a fraction of a
    millisecond, where the SDK's copy and stdlib encoding took ~15 ms).

    The encoded messages of recent requests are kept (up to `budget` bytes, least recently used
    dropped first) but for their last two (where the moving breakpoints are), found again by their first
    Block object, and a new request reuses the longest run of whole messages whose blocks are the same
    objects (see bot/domain/memo.py): settled turns render to shared, immutable blocks, so a long session
    encodes only its newest turns, and an inherited fork's first request reuses its parent's encoding.
    """

    def __init__(self, model: str, max_tokens: int, tools: list[dict] | None = None, budget: int = 64 << 20,
                 tool_max_uses: int = 5, effort: str = "default"):
        self.model = model
        self.effort = effort  # THREADFORK_EFFORT: where a channel chose none
        self.max_tokens = max_tokens
        self.tools = tools or None  # no `tools` key at all without tools
        self.tool_max_uses = tool_max_uses  # for a channel's own choice of tools
        self.budget = budget
        self._kept: OrderedDict[int, list[_Encoded]] = OrderedDict()  # id(first block) → newest first
        self._size = 0
        self._lock = threading.Lock()

    def encode(self, model_input: ModelInput) -> bytes:
        blocks = model_input.blocks
        known = self._reusable(blocks)
        parts, ends = [known.data] if known.data else [], list(known.ends)
        count, size = (ends[-1] if ends else (0, -1))
        for message in ModelInput("", blocks[count:]).messages():
            data = orjson.dumps(message)
            parts.append(data)
            count, size = count + len(message["content"]), size + 1 + len(data)  # 1: the comma before it
            ends.append((count, size))
        history = b",".join(parts)
        if len(ends) > 1:
            # everything but the last two messages: the last may still grow or lose its breakpoint, and the one
            # before holds the settled history's breakpoint, which moves on at the next turn (domain/caching.py)
            last = -3 if len(ends) > 2 else -2
            kept_blocks, kept_bytes = ends[last]
            self._keep(_Encoded(blocks[:kept_blocks], history[:kept_bytes], tuple(ends[:last + 1])))
        tools = self.tools if model_input.tools is None else server_tools(model_input.tools, self.tool_max_uses)
        tools = [*(tools or ()), *mcp_toolsets(model_input)]
        servers = {"mcp_servers": mcp_servers(model_input)} if model_input.connectors else {}
        model = model_input.model or self.model
        head = orjson.dumps({"model": model, "max_tokens": self.max_tokens, "stream": True,
                             **output_config(model, model_input.effort or self.effort),
                             "system": _system(model_input), **({"tools": tools} if tools else {}), **servers})
        return b"".join((head[:-1], b',"messages":[', history, b"]}"))

    def _reusable(self, blocks: tuple[Block, ...]) -> _Encoded:
        if not blocks:
            return _NOTHING
        with self._lock:
            candidates = [c for c in self._kept.get(id(blocks[0]), ()) if c.blocks[0] is blocks[0]]
            if candidates:
                self._kept.move_to_end(id(blocks[0]))
        # whole earlier requests first: a tuple comparison checks identity at C speed
        whole = [c for c in candidates if blocks[:len(c.blocks)] == c.blocks]
        if whole:
            longest = max(whole, key=lambda c: len(c.blocks))
            return _whole_messages(longest, blocks, len(longest.blocks))
        return _whole_messages(candidates[0], blocks, _shared_prefix(blocks, candidates[0].blocks)) \
            if candidates else _NOTHING

    def _keep(self, encoded: _Encoded) -> None:
        key = id(encoded.blocks[0])
        with self._lock:
            old = self._kept.pop(key, [])
            self._size -= _bytes(old)
            # forget what the new encoding extends, and what belonged to another object with that id
            others = [c for c in old
                      if c.blocks[0] is encoded.blocks[0] and encoded.blocks[:len(c.blocks)] != c.blocks]
            self._kept[key] = group = [encoded, *others][:KEPT_PER_START]
            self._size += _bytes(group)
            while self._size > self.budget and self._kept:
                _, dropped = self._kept.popitem(last=False)
                self._size -= _bytes(dropped)


def _bytes(group: list[_Encoded]) -> int:
    return sum(len(c.data) for c in group)


_NOTHING = _Encoded((), b"", ())


def _whole_messages(kept: _Encoded, blocks: tuple[Block, ...], same: int) -> _Encoded:
    """The longest kept run of whole messages inside the first `same` shared blocks, after which a
    new message starts (the next block has another role, or there is none)."""
    for i in range(len(kept.ends) - 1, -1, -1):
        count, size = kept.ends[i]
        if count <= same and (count == len(blocks) or blocks[count].role != blocks[count - 1].role):
            return _Encoded(blocks[:count], kept.data[:size], kept.ends[:i + 1])
    return _NOTHING


def _shared_prefix(a: tuple[Block, ...], b: tuple[Block, ...]) -> int:
    """How many leading blocks are the same (identical objects, or equal ones)."""
    n = min(len(a), len(b))
    for i in range(n):
        if a[i] is not b[i] and a[i] != b[i]:
            return i
    return n
