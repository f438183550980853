"""The Messages API's MCP connector, as the fake Anthropic checks and scripts it.

Source: platform.claude.com "MCP connector"
(https://platform.claude.com/docs/en/agents-and-tools/mcp-connector) and the anthropic SDK's beta
types (BetaRequestMCPServerURLDefinitionParam, BetaMCPToolsetParam, BetaMCPToolUseBlock,
BetaMCPToolResultBlock). The page names the beta `mcp-client-2025-11-20`; Threadfork sends
`mcp-client-2026-09-15` (a later version the SDK's AnthropicBetaParam lists): either is accepted.

A request that uses the connector has:
- the `anthropic-beta` header naming the beta — without it `mcp_servers` is an unknown field
  (`mcp_servers: Extra inputs are not permitted`) and `mcp_toolset` an unknown tool tag;
- `mcp_servers`: a list of {type "url", url (must start with https://), name (unique in the
  request), authorization_token (optional)};
- in `tools`, one {type "mcp_toolset", mcp_server_name, default_config?, configs?, cache_control?}
  per server: every server referenced by exactly one toolset, every toolset naming a defined
  server. `default_config` / each `configs` entry hold `enabled` and `defer_loading` booleans; an
  allowlist is `default_config: {"enabled": false}` with `configs: {tool: {"enabled": true}}`.
Messages where the docs give none are the fake's own wording, in the API's pydantic style.

An answer that calls an MCP tool holds, in order, an `mcp_tool_use` block {id "mcptoolu_…",
name, server_name, input} (streamed like a server tool use: started with `input: {}`, then
`input_json_delta` pieces) and its `mcp_tool_result` block {tool_use_id, is_error, content: [text
blocks]}, sent whole in its `content_block_start`. A script names the calls with `McpCall`; a call
to a server or tool the request does not allow is never made (the model cannot see that tool).

The tool listing the API fetched from a server while producing an answer comes first in that answer, one
`mcp_tool_listing` block per server {type, mcp_server_name, tools: [{name, description, input_schema}]}, sent
whole in its `content_block_start` (the SDK's BetaMCPToolListingBlock / BetaRawContentBlockStartEvent). The
client sends it back unchanged with the assistant message, and the API then uses it instead of asking the
server again: a server whose listing the request already holds, or whose toolset pins its `tools`, is not
listed anew. A listing sent back is checked as the SDK's BetaMCPToolListingBlockParam states it
(`mcp_server_name` and `tools` required, nothing else). The fake lists, per server, the tools its toolset's
`configs` and the script's calls name (else one `search` tool).
"""
from __future__ import annotations

import itertools
from dataclasses import dataclass, field

BETAS = frozenset({"mcp-client-2025-11-20", "mcp-client-2026-09-15"})
SERVER_KEYS = {"type", "url", "name", "authorization_token", "tool_configuration"}
TOOLSET_KEYS = {"type", "mcp_server_name", "default_config", "configs", "cache_control", "tools"}
CONFIG_KEYS = {"enabled", "defer_loading"}
LISTING_KEYS = {"type", "mcp_server_name", "tools"}
LISTED_TOOL_KEYS = {"name", "description", "input_schema"}
_ids = itertools.count(1)


@dataclass
class McpCall:
    """One MCP tool call Claude makes during a scripted answer, and what the server answered."""

    server: str
    tool: str
    input: dict = field(default_factory=dict)
    result: str = "The tool's result."
    is_error: bool = False


def mcp_problem(request: dict, betas: set[str]) -> str | None:
    toolsets = [(i, t) for i, t in enumerate(request.get("tools") or [])
                if isinstance(t, dict) and t.get("type") == "mcp_toolset"]
    if "mcp_servers" not in request and not toolsets:
        return None
    if not betas & BETAS:
        if "mcp_servers" in request:
            return "mcp_servers: Extra inputs are not permitted"
        return (f"tools.{toolsets[0][0]}: Input tag 'mcp_toolset' found using 'type' does not match any of the "
                "expected tags")
    servers = request.get("mcp_servers", [])
    if not isinstance(servers, list):
        return "mcp_servers: Input should be a valid list"
    names: list[str] = []
    for i, server in enumerate(servers):
        found = _server(server, f"mcp_servers.{i}")
        if found:
            return found
        names.append(server["name"])
    if len(names) != len(set(names)):
        return "mcp_servers: MCP server names must be unique"
    referenced: list[str] = []
    for i, toolset in toolsets:
        found = _toolset(toolset, f"tools.{i}.mcp_toolset", names)
        if found:
            return found
        referenced.append(toolset["mcp_server_name"])
    for name in names:
        if referenced.count(name) != 1:
            how = "is not referenced by any" if name not in referenced else "is referenced by more than one"
            return f"mcp_servers: MCP server '{name}' {how} mcp_toolset in tools"
    return None


def _server(server, path: str) -> str | None:
    if not isinstance(server, dict):
        return f"{path}: Input should be a valid dictionary or object to extract fields from"
    for key in server:
        if key not in SERVER_KEYS:
            return f"{path}.{key}: Extra inputs are not permitted"
    for key in ("type", "url", "name"):
        if key not in server:
            return f"{path}.{key}: Field required"
    if server["type"] != "url":
        return f"{path}.type: Input should be 'url'"
    for key in ("url", "name"):
        if not isinstance(server[key], str) or not server[key]:
            return f"{path}.{key}: Input should be a non-empty string"
    if not server["url"].startswith("https://"):
        return f"{path}.url: MCP server URL must start with https://"
    token = server.get("authorization_token")
    if token is not None and not isinstance(token, str):
        return f"{path}.authorization_token: Input should be a valid string"
    return None


def _toolset(toolset: dict, path: str, names: list[str]) -> str | None:
    for key in toolset:
        if key not in TOOLSET_KEYS:
            return f"{path}.{key}: Extra inputs are not permitted"
    if "mcp_server_name" not in toolset:
        return f"{path}.mcp_server_name: Field required"
    if toolset["mcp_server_name"] not in names:
        return f"{path}.mcp_server_name: MCP server '{toolset['mcp_server_name']}' is not defined in mcp_servers"
    configs = toolset.get("configs") or {}
    if not isinstance(configs, dict):
        return f"{path}.configs: Input should be a valid dictionary"
    for where, config in [("default_config", toolset.get("default_config") or {}),
                          *((f"configs.{name}", c) for name, c in configs.items())]:
        if not isinstance(config, dict):
            return f"{path}.{where}: Input should be a valid dictionary"
        for key, value in config.items():
            if key not in CONFIG_KEYS:
                return f"{path}.{where}.{key}: Extra inputs are not permitted"
            if not isinstance(value, bool):
                return f"{path}.{where}.{key}: Input should be a valid boolean"
    return None


def allowed(request: dict, server: str, tool: str) -> bool:
    """Whether the request lets Claude call `tool` of `server` (its toolset's configs over its default)."""
    for toolset in request.get("tools") or []:
        if isinstance(toolset, dict) and toolset.get("type") == "mcp_toolset" \
                and toolset.get("mcp_server_name") == server:
            default = (toolset.get("default_config") or {}).get("enabled", True)
            return (toolset.get("configs") or {}).get(tool, {}).get("enabled", default)
    return False


def mcp_blocks(request: dict, calls: list) -> list[dict]:
    """The mcp_tool_use and mcp_tool_result blocks of the scripted calls the request allows."""
    blocks = []
    for call in calls:
        if not allowed(request, call.server, call.tool):
            continue
        use_id = f"mcptoolu_01Fake{next(_ids):010d}"
        blocks.append({"type": "mcp_tool_use", "id": use_id, "name": call.tool, "server_name": call.server,
                       "input": call.input})
        blocks.append({"type": "mcp_tool_result", "tool_use_id": use_id, "is_error": call.is_error,
                       "content": [{"type": "text", "text": call.result}]})
    return blocks


def listing_blocks(request: dict, calls: list) -> list[dict]:
    """The `mcp_tool_listing` of each declared server the API would ask for its tools while answering."""
    held = {b.get("mcp_server_name") for m in request.get("messages") or [] if isinstance(m.get("content"), list)
            for b in m["content"] if isinstance(b, dict) and b.get("type") == "mcp_tool_listing"}
    blocks = []
    for toolset in request.get("tools") or []:
        if not isinstance(toolset, dict) or toolset.get("type") != "mcp_toolset" or "tools" in toolset:
            continue
        server = toolset["mcp_server_name"]
        if server in held:
            continue
        names = sorted({*(toolset.get("configs") or {}), *(c.tool for c in calls if c.server == server)}) or ["search"]
        blocks.append({"type": "mcp_tool_listing", "mcp_server_name": server, "tools": [
            {"name": name, "description": f"The {name} tool of {server}.",
             "input_schema": {"type": "object", "properties": {"q": {"type": "string"}}}} for name in names]})
    return blocks


def listing_problem(block: dict, path: str) -> str | None:
    """A listing handed back, as BetaMCPToolListingBlockParam types it."""
    for key in block:
        if key not in LISTING_KEYS:
            return f"{path}.{key}: Extra inputs are not permitted"
    for key in ("mcp_server_name", "tools"):
        if key not in block:
            return f"{path}.{key}: Field required"
    if not isinstance(block["mcp_server_name"], str):
        return f"{path}.mcp_server_name: Input should be a valid string"
    if not isinstance(block["tools"], list):
        return f"{path}.tools: Input should be a valid list"
    for i, tool in enumerate(block["tools"]):
        where = f"{path}.tools.{i}"
        if not isinstance(tool, dict):
            return f"{where}: Input should be a valid dictionary or object to extract fields from"
        extra = next((k for k in tool if k not in LISTED_TOOL_KEYS), None)
        if extra:
            return f"{where}.{extra}: Extra inputs are not permitted"
        for key, kind in (("name", str), ("input_schema", dict)):
            if key not in tool:
                return f"{where}.{key}: Field required"
            if not isinstance(tool[key], kind):
                return f"{where}.{key}: Input should be a valid {'string' if kind is str else 'dictionary'}"
    return None
