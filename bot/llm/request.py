"""Turn a domain ModelInput into the Messages API request body. Pure: no SDK import."""
from __future__ import annotations

import orjson

from ..domain.context import ModelInput, cache_control
from ..domain.memory_files import MEMORY_TOOL
from ..domain.pricing import takes_effort

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


def output_config(model: str, effort: str | None) -> dict:
    """`output_config.effort` (platform.claude.com "Effort"): low, medium or high for a model that takes it;
    nothing for the API's default or a model that takes no effort (it would answer 400)."""
    if not effort or effort == "default" or not takes_effort(model):
        return {}
    return {"output_config": {"effort": effort}}


def _system(model_input: ModelInput) -> list[dict]:
    return [{"type": "text", "text": model_input.system, "cache_control": cache_control(model_input.system_ttl)}]


class RequestEncoder:
    """The one builder of a Messages API request: `request()` is its body, `encode()` that body's bytes,
    the same bytes for the same input every time (the prompt cache reads them). orjson encodes it in one
    call: a 1,000-turn history (~460 KB) in ~0.6 ms, where the SDK's copy and stdlib encoding took ~15 ms.
    Its keys keep the order Threadfork has always sent, the messages last."""

    def __init__(self, model: str, max_tokens: int, tools: list[dict] | None = None, tool_max_uses: int = 5,
                 effort: str = "default"):
        self.model = model
        self.effort = effort  # THREADFORK_EFFORT: where a channel chose none
        self.max_tokens = max_tokens
        self.tools = tools or None  # no `tools` key at all without tools
        self.tool_max_uses = tool_max_uses  # for a channel's own choice of tools

    def request(self, model_input: ModelInput, continuation: list[dict] | None = None) -> dict:
        """The body; a channel's own model, tools and effort in `model_input` win over the configured ones.
        `continuation`: the answer so far, as messages after the input's — the assistant's content blocks handed
        back as they came (thinking signed), and the memory tool's results after its calls."""
        tools = self.tools if model_input.tools is None else server_tools(model_input.tools, self.tool_max_uses)
        tools = [*(tools or ()), *mcp_toolsets(model_input), *([MEMORY_TOOL] if model_input.memory else [])]
        model = model_input.model or self.model
        request = {"model": model, "max_tokens": self.max_tokens, "stream": True,
                   **output_config(model, model_input.effort or self.effort), "system": _system(model_input)}
        if tools:
            request["tools"] = tools
        if model_input.connectors:
            request["mcp_servers"] = mcp_servers(model_input)
        request["messages"] = model_input.messages() + list(continuation or ())
        return request

    def encode(self, model_input: ModelInput, continuation: list[dict] | None = None) -> bytes:
        return orjson.dumps(self.request(model_input, continuation))
