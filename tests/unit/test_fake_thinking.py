"""The fake Messages API thinks as Claude Sonnet 5.5 does and refuses what the API refuses about thinking,
models and their settings: every streamed event parses as the anthropic SDK's own event models, a
continuation must hand the paused answer's signed thinking back unchanged, unknown models are 404."""
import copy
import json
import urllib.error
import urllib.request

import anthropic
import pytest
from pydantic import TypeAdapter
from anthropic.types import RawMessageStreamEvent

from tests.fakes.anthropic_api import FakeAnthropic, Script, Search

EVENTS = TypeAdapter(RawMessageStreamEvent)
SEARCH = {"type": "web_search_20250305", "name": "web_search", "max_uses": 5}


@pytest.fixture
def fake():
    running = FakeAnthropic().start()
    yield running
    running.stop()


def body(model="claude-sonnet-5-5", messages=None, **fields):
    return {"model": model, "max_tokens": 4000, "stream": True,
            "messages": messages or [{"role": "user", "content": "Why is the sky blue?"}], **fields}


def post(fake, request) -> tuple[int, list[dict] | dict]:
    call = urllib.request.Request(fake.url + "/v1/messages", data=json.dumps(request).encode(),
                                  headers={"Content-Type": "application/json"})
    try:
        with urllib.request.urlopen(call, timeout=5) as response:
            stream = response.read().decode()
    except urllib.error.HTTPError as error:
        return error.code, json.loads(error.read())
    events = [json.loads(chunk.split("\n", 1)[1].removeprefix("data: ")) for chunk in stream.strip().split("\n\n")]
    return 200, events


def content_of(events: list[dict]) -> list[dict]:
    """The answer's blocks, accumulated from the events as a client does."""
    blocks: dict[int, dict] = {}
    for event in events:
        if event["type"] == "content_block_start":
            blocks[event["index"]] = dict(event["content_block"])
        elif event["type"] == "content_block_delta":
            block, delta = blocks[event["index"]], event["delta"]
            if delta["type"] == "thinking_delta":
                block["thinking"] += delta["thinking"]
            elif delta["type"] == "signature_delta":
                block["signature"] = delta["signature"]
            elif delta["type"] == "text_delta":
                block["text"] += delta["text"]
            elif delta["type"] == "input_json_delta":
                block.setdefault("_json", "")
                block["_json"] += delta["partial_json"]
    for block in blocks.values():
        if "_json" in block:
            block["input"] = json.loads(block.pop("_json"))
    return [blocks[i] for i in sorted(blocks)]


def test_sonnet_5_5_without_a_thinking_field_streams_a_signed_thinking_block_before_its_text(fake):
    status, events = post(fake, body())
    assert status == 200
    for event in events:
        assert EVENTS.validate_python(event).model_dump(exclude_unset=True) == event
    starts = [e["content_block"]["type"] for e in events if e["type"] == "content_block_start"]
    assert starts == ["thinking", "text"]
    deltas = [e["delta"]["type"] for e in events if e["type"] == "content_block_delta" and e["index"] == 0]
    assert deltas[0] == "thinking_delta" and deltas[-1] == "signature_delta"
    thinking = content_of(events)[0]
    assert thinking["thinking"] == "" and len(thinking["signature"]) > 40  # display "omitted": signed, not shown


def test_a_summarized_display_shows_the_thought_and_a_model_that_does_not_think_by_default_does_not(fake):
    fake.script(Script(text="Blue.", thinking="Rayleigh scattering."))
    _, events = post(fake, body(thinking={"type": "adaptive", "display": "summarized"}))
    assert content_of(events)[0]["thinking"] == "Rayleigh scattering."
    _, events = post(fake, body(model="claude-haiku-4-5"))
    assert [b["type"] for b in content_of(events)] == ["text"]


def test_message_delta_usage_is_cumulative_and_a_refusal_carries_its_details(fake):
    fake.script(Script(text="I can't help with that.", stop_reason="refusal",
                       stop_details={"type": "refusal", "category": "cyber", "explanation": "declined"}))
    _, events = post(fake, body())
    final = next(e for e in events if e["type"] == "message_delta")
    assert {"input_tokens", "output_tokens", "cache_read_input_tokens", "cache_creation_input_tokens"} <= set(final["usage"])
    assert final["delta"]["stop_reason"] == "refusal" and final["delta"]["stop_details"]["category"] == "cyber"
    EVENTS.validate_python(final)


@pytest.mark.parametrize("reason", ["end_turn", "max_tokens", "refusal", "pause_turn", "model_context_window_exceeded"])
def test_every_stop_reason_is_scriptable(fake, reason):
    fake.script(Script(text="Part of it", stop_reason=reason))
    _, events = post(fake, body())
    assert next(e for e in events if e["type"] == "message_delta")["delta"]["stop_reason"] == reason


def paused_answer(fake) -> tuple[dict, list[dict]]:
    fake.script(Script(tools=[Search("sky colour", results=[("https://example.org/sky", "Sky")])],
                       preface="Let me look.", stop_reason="pause_turn", redacted=True), Script(text="Blue."))
    request = body(tools=[SEARCH])
    _, events = post(fake, request)
    # handed back as a client does: without the empty text block the API would refuse
    return request, [b for b in content_of(events) if b != {"type": "text", "text": ""}]


def continued(request: dict, content: list[dict]) -> dict:
    return {**request, "messages": [*request["messages"], {"role": "assistant", "content": content}]}


def test_a_continuation_that_hands_the_thinking_back_unchanged_is_answered(fake):
    request, content = paused_answer(fake)
    assert [b["type"] for b in content[:2]] == ["thinking", "redacted_thinking"]
    status, _ = post(fake, continued(request, content))
    assert fake.rejections == [] and status == 200


@pytest.mark.parametrize("change", ["missing", "altered", "unsigned", "redacted_dropped"])
def test_a_continuation_whose_thinking_is_missing_altered_or_unsigned_is_refused(fake, change):
    request, content = paused_answer(fake)
    content = copy.deepcopy(content)
    if change == "missing":
        content = content[2:]
    elif change == "altered":
        content[0]["thinking"] = "I changed my mind."
    elif change == "unsigned":
        del content[0]["signature"]
    else:
        del content[1]
    status, answer = post(fake, continued(request, content))
    assert status == 400 and answer["error"]["type"] == "invalid_request_error"
    assert fake.rejections


@pytest.mark.parametrize("fields, words", [
    ({"thinking": {"type": "enabled", "budget_tokens": 2000}}, "thinking.type.enabled"),
    ({"thinking": {"type": "disabled"}}, "between_tools"),
    ({"temperature": 0.2}, "temperature"),
    ({"top_k": 5}, "top_k"),
    ({"tool_choice": {"type": "any"}, "tools": [SEARCH]}, "tool_choice"),
    ({"output_config": {"effort": "extreme"}}, "output_config.effort"),
])
def test_the_settings_sonnet_5_5_refuses_are_answered_400(fake, fields, words):
    status, answer = post(fake, body(**fields))
    assert status == 400 and words in answer["error"]["message"]


def test_an_assistant_prefill_is_refused_on_sonnet_5_5_and_accepted_on_an_older_model(fake):
    prefill = [{"role": "user", "content": "Name a colour."}, {"role": "assistant", "content": "The colour is"}]
    status, answer = post(fake, body(messages=prefill))
    assert status == 400 and "Prefilling" in answer["error"]["message"]
    assert post(fake, body(model="claude-sonnet-4-6", messages=prefill))[0] == 200


def test_effort_is_refused_by_a_model_that_does_not_take_it(fake):
    assert post(fake, body(output_config={"effort": "low"}))[0] == 200
    status, answer = post(fake, body(model="claude-haiku-4-5", output_config={"effort": "low"}))
    assert status == 400 and "effort" in answer["error"]["message"]


def test_an_unknown_model_is_404_on_the_messages_and_the_models_api(fake):
    status, answer = post(fake, body(model="claude-nonexistent-1"))
    assert (status, answer["error"]["type"]) == (404, "not_found_error")
    client = anthropic.Anthropic(api_key="sk-ant-test-key-not-real", base_url=fake.url, max_retries=0)
    with pytest.raises(anthropic.NotFoundError):
        client.models.retrieve("claude-nonexistent-1")
    assert client.models.retrieve("claude-sonnet-5-5").id == "claude-sonnet-5-5"


TRACKER = {"mcp_servers": [{"type": "url", "url": "https://mcp.tracker.example/mcp", "name": "tracker"}],
           "tools": [{"type": "mcp_toolset", "mcp_server_name": "tracker"}]}


def post_beta(fake, request) -> tuple[int, list[dict] | dict]:
    """`post` with the MCP connector's beta header."""
    call = urllib.request.Request(fake.url + "/v1/messages", data=json.dumps(request).encode(),
                                  headers={"Content-Type": "application/json", "anthropic-beta": "mcp-client-2026-09-15"})
    try:
        with urllib.request.urlopen(call, timeout=5) as response:
            stream = response.read().decode()
    except urllib.error.HTTPError as error:
        return error.code, json.loads(error.read())
    return 200, [json.loads(chunk.split("\n", 1)[1].removeprefix("data: ")) for chunk in stream.strip().split("\n\n")]


def test_an_answer_with_a_connector_streams_its_servers_tool_listing_first_as_the_sdk_types_it(fake):
    from anthropic.types.beta import BetaRawMessageStreamEvent

    status, events = post_beta(fake, body(**TRACKER))
    assert status == 200
    for event in events:
        TypeAdapter(BetaRawMessageStreamEvent).validate_python(event)
    [listing, *rest] = content_of(events)
    assert listing["type"] == "mcp_tool_listing" and listing["mcp_server_name"] == "tracker"
    assert [t["name"] for t in listing["tools"]] == ["search"] and isinstance(listing["tools"][0]["input_schema"], dict)
    assert [b["type"] for b in rest] == ["thinking", "text"]
    _, plain = post(fake, body())
    assert "mcp_tool_listing" not in [b["type"] for b in content_of(plain)]  # no connector, no listing


def test_a_listing_handed_back_is_used_again_and_one_a_toolset_pins_is_never_fetched(fake):
    fake.script(Script(text="Let me look.", stop_reason="pause_turn", thinking=None))
    _, events = post_beta(fake, body(model="claude-haiku-4-5", **TRACKER))
    paused = content_of(events)
    assert paused[0]["type"] == "mcp_tool_listing"
    messages = [{"role": "user", "content": "Why is the sky blue?"}, {"role": "assistant", "content": paused}]
    status, events = post_beta(fake, body(model="claude-haiku-4-5", messages=messages, **TRACKER))
    assert status == 200 and "mcp_tool_listing" not in [b["type"] for b in content_of(events)]
    pinned = {**TRACKER, "tools": [{"type": "mcp_toolset", "mcp_server_name": "tracker", "tools": paused[0]["tools"]}]}
    _, events = post_beta(fake, body(model="claude-haiku-4-5", **pinned))
    assert "mcp_tool_listing" not in [b["type"] for b in content_of(events)]


@pytest.mark.parametrize("listing, error", [
    ({"type": "mcp_tool_listing", "mcp_server_name": "tracker", "tools": []}, None),
    ({"type": "mcp_tool_listing", "server_name": "tracker", "tools": []}, "content.0.server_name: Extra inputs"),
    ({"type": "mcp_tool_listing", "tools": []}, "content.0.mcp_server_name: Field required"),
    ({"type": "mcp_tool_listing", "mcp_server_name": "tracker", "tools": [{"name": "search"}]},
     "content.0.tools.0.input_schema: Field required"),
])
def test_mcp_tool_listing_blocks_are_accepted_back_with_the_connector_beta_as_the_sdk_types_them(fake, listing, error):
    messages = [{"role": "user", "content": "hi"}, {"role": "assistant", "content": [listing, {"type": "text", "text": "Hi."}]},
                {"role": "user", "content": "again"}]
    status, answer = post_beta(fake, body(model="claude-haiku-4-5", messages=messages))
    if error is None:
        assert status == 200
    else:
        assert status == 400 and error in answer["error"]["message"]
        fake.rejections.clear()
