"""The fake Messages API checks the MCP connector's request fields as the API does (platform.claude.com
"MCP connector") and streams scripted `mcp_tool_use` / `mcp_tool_result` blocks that the anthropic
SDK's beta event models parse."""
import json
import urllib.request

import pytest
from pydantic import TypeAdapter
from anthropic.types.beta import BetaRawMessageStreamEvent

from tests.fakes.anthropic_api import FakeAnthropic, McpCall, Script
from tests.fakes.mcp_rules import mcp_problem

BETA = {"mcp-client-2026-09-15"}
SERVER = {"type": "url", "url": "https://mcp.example.com/mcp", "name": "tracker", "authorization_token": "tkn"}
TOOLSET = {"type": "mcp_toolset", "mcp_server_name": "tracker"}
EVENTS = TypeAdapter(BetaRawMessageStreamEvent)


def request(servers=(SERVER,), tools=(TOOLSET,)) -> dict:
    return {"model": "claude-test", "max_tokens": 100, "messages": [{"role": "user", "content": "hi"}],
            "mcp_servers": list(servers), "tools": list(tools)}


def test_a_well_formed_connector_request_is_accepted():
    allowlist = {**TOOLSET, "default_config": {"enabled": False}, "configs": {"search": {"enabled": True}}}
    assert mcp_problem(request(tools=[allowlist]), BETA) is None
    assert mcp_problem(request(servers=[{k: v for k, v in SERVER.items() if k != "authorization_token"}]), BETA) is None


@pytest.mark.parametrize("servers, tools, betas, message", [
    ([SERVER], [TOOLSET], set(), "mcp_servers: Extra inputs are not permitted"),
    ([{k: v for k, v in SERVER.items() if k != "name"}], [TOOLSET], BETA, "mcp_servers.0.name: Field required"),
    ([{k: v for k, v in SERVER.items() if k != "url"}], [TOOLSET], BETA, "mcp_servers.0.url: Field required"),
    ([{**SERVER, "url": "http://mcp.example.com"}], [TOOLSET], BETA, "mcp_servers.0.url: MCP server URL must start"),
    ([SERVER, SERVER], [TOOLSET], BETA, "mcp_servers: MCP server names must be unique"),
    ([SERVER], [], BETA, "MCP server 'tracker' is not referenced by any mcp_toolset"),
    ([SERVER], [TOOLSET, TOOLSET], BETA, "MCP server 'tracker' is referenced by more than one mcp_toolset"),
    ([SERVER], [{**TOOLSET, "mcp_server_name": "wiki"}], BETA, "tools.0.mcp_toolset.mcp_server_name: MCP server 'wiki'"),
    ([SERVER], [{**TOOLSET, "default_config": {"enabled": "yes"}}], BETA, "default_config.enabled: Input should be"),
])
def test_a_malformed_connector_request_is_refused_with_the_apis_kind_of_message(servers, tools, betas, message):
    assert message in (mcp_problem(request(servers, tools), betas) or "")


def post(fake, body: dict, beta: str | None):
    headers = {"Content-Type": "application/json", **({"anthropic-beta": beta} if beta else {})}
    return urllib.request.Request(fake.url + "/v1/messages", data=json.dumps(body).encode(), headers=headers)


def test_the_fake_answers_a_request_without_the_beta_header_400_invalid_request_error():
    fake = FakeAnthropic().start()
    try:
        with pytest.raises(urllib.error.HTTPError) as refused:
            urllib.request.urlopen(post(fake, request(), None), timeout=5)
        assert refused.value.code == 400
        assert json.loads(refused.value.read())["error"]["type"] == "invalid_request_error"
        assert fake.rejections == ["request 1: mcp_servers: Extra inputs are not permitted"]
    finally:
        fake.stop()


def test_scripted_mcp_calls_stream_as_the_sdks_beta_events_and_only_for_allowed_tools():
    fake = FakeAnthropic().start()
    try:
        fake.script(Script(text="Found it.", mcp=[McpCall("tracker", "search", {"q": "bug 12"}, "Bug 12: open"),
                                                  McpCall("tracker", "delete", {"id": 12})]))
        allowlist = {**TOOLSET, "default_config": {"enabled": False}, "configs": {"search": {"enabled": True}}}
        with urllib.request.urlopen(post(fake, {**request(tools=[allowlist]), "stream": True},
                                         "mcp-client-2026-09-15"), timeout=5) as response:
            chunks = response.read().decode().strip().split("\n\n")
        events = [EVENTS.validate_python(json.loads(c.split("\n", 1)[1].removeprefix("data: "))) for c in chunks]
        starts = [e.content_block for e in events if e.type == "content_block_start"]
        assert [b.type for b in starts] == ["mcp_tool_listing", "mcp_tool_use", "mcp_tool_result", "text"]
        listing, use, result = starts[0], starts[1], starts[2]
        assert listing.mcp_server_name == "tracker"  # the server's tools, the disallowed one too
        assert [t.name for t in listing.tools] == ["delete", "search"]
        assert (use.server_name, use.name, use.input) == ("tracker", "search", {})  # the input streams after
        deltas = "".join(e.delta.partial_json for e in events if e.type == "content_block_delta" and e.index == 1)
        assert json.loads(deltas) == {"q": "bug 12"}
        assert result.tool_use_id == use.id and result.is_error is False
        assert result.content[0].text == "Bug 12: open"
        assert fake.rejections == []
    finally:
        fake.stop()
