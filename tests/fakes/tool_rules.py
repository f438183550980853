"""What the Messages API refuses in `tools`, and which server tools a request offers.

The tool types, their names and the keys each may carry are read from the anthropic SDK's own
request types (`anthropic.types.ToolUnionParam`), so the fake knows exactly the versions the SDK
does: web search `web_search_20250305`, `_20260209`, `_20260318`; web fetch `web_fetch_20250910`,
`_20260209`, `_20260309`, `_20260318` (docs: platform.claude.com, "Web search tool" and "Web fetch
tool"; both are generally available, no beta header). Messages, pydantic-style as the API's are:
- `tools: Input should be a valid list`; `tools.N: Input should be a valid dictionary…`;
- `tools.N: Input tag 'x' found using 'type' does not match any of the expected tags: …`
  (quoted in vercel/ai #10570);
- `tools.N.web_search_20250305.name: Input should be 'web_search'`, `….foo: Extra inputs are not
  permitted`, `….max_uses: Input should be greater than 0` (the fake's wording for a bound the
  docs state);
- a custom tool without `name` / `input_schema`: `tools.N.custom.name: Field required`;
- `tools: Tool names must be unique.`
The MCP connector's `mcp_toolset` entries are mcp_rules.py's to check (they need the beta header).
"""
from __future__ import annotations

import typing

from anthropic.types import ToolUnionParam


def _server_tool_types() -> dict[str, tuple[str | None, set[str]]]:
    """tool type → (the name it must have, the keys it may carry), from the SDK."""
    known = {}
    for param in typing.get_args(ToolUnionParam):
        hints = typing.get_type_hints(param)
        kinds = typing.get_args(hints["type"])
        if not kinds or not all(isinstance(k, str) for k in kinds):
            continue  # the custom tool: Optional[Literal["custom"]]
        names = typing.get_args(hints.get("name", str))
        for kind in kinds:
            known[kind] = (names[0] if names else None, set(hints))
    return known


SERVER_TOOLS = _server_tool_types()
CUSTOM_KEYS = set(typing.get_type_hints(typing.get_args(ToolUnionParam)[0]))
TAGS = ", ".join(f"'{t}'" for t in ["custom", *SERVER_TOOLS])


def tools_problem(request: dict) -> str | None:
    if "tools" not in request:
        return None
    tools = request["tools"]
    if not isinstance(tools, list):
        return "tools: Input should be a valid list"
    toolsets = [i for i, t in enumerate(tools) if isinstance(t, dict) and t.get("type") == "mcp_toolset"]
    tools = [t for i, t in enumerate(tools) if i not in toolsets]
    for i, tool in enumerate(tools):
        found = _tool(tool, f"tools.{i + sum(1 for j in toolsets if j <= i)}")
        if found:
            return found
    names = [tool.get("name") for tool in tools]
    if len(names) != len(set(names)):
        return "tools: Tool names must be unique."
    return None


def _tool(tool, path: str) -> str | None:
    if not isinstance(tool, dict):
        return f"{path}: Input should be a valid dictionary or object to extract fields from"
    kind = tool.get("type", "custom")
    if kind == "custom" or kind is None:
        return _keys(tool, CUSTOM_KEYS, f"{path}.custom", required=("name", "input_schema"))
    if kind not in SERVER_TOOLS:
        return f"{path}: Input tag '{kind}' found using 'type' does not match any of the expected tags: {TAGS}"
    name, keys = SERVER_TOOLS[kind]
    where = f"{path}.{kind}"
    found = _keys(tool, keys, where, required=("name",) if name else ())
    if found:
        return found
    if name and tool["name"] != name:
        return f"{where}.name: Input should be '{name}'"
    uses = tool.get("max_uses")
    if uses is not None and (not isinstance(uses, int) or isinstance(uses, bool)):
        return f"{where}.max_uses: Input should be a valid integer"
    if uses is not None and uses < 1:
        return f"{where}.max_uses: Input should be greater than 0"
    return None


def _keys(tool: dict, allowed: set[str], where: str, required: tuple[str, ...]) -> str | None:
    for key in tool:
        if key not in allowed:
            return f"{where}.{key}: Extra inputs are not permitted"
    for key in required:
        if key not in tool:
            return f"{where}.{key}: Field required"
    return None


def server_tools(request: dict) -> dict[str, dict]:
    """The web search and web fetch tools a request offers, by name (`web_search`, `web_fetch`)."""
    return {tool["name"]: tool for tool in request.get("tools") or []
            if isinstance(tool, dict) and str(tool.get("type", "")).startswith(("web_search_", "web_fetch_"))}
