"""The one request encoder: the same input always gives the same bytes, the plain JSON encoding of the
request in the key order Threadfork has always sent (the prompt cache reads those bytes)."""
import json

from hypothesis import given, settings
from hypothesis import strategies as st

from bot.domain.caching import Ttl
from bot.domain.connectors import Connector
from bot.domain.context import Block, ModelInput
from bot.llm.claude import RequestEncoder

MODEL, MAX = "claude-test", 100


def block(role, text, breakpoint=False):
    return Block(role, text, breakpoint)


def wire(encoder, model_input):
    return json.loads(encoder.encode(model_input))


def plain_json(request: dict) -> bytes:
    return json.dumps(request, ensure_ascii=False, separators=(",", ":")).encode()


def reference(model_input: ModelInput) -> dict:
    """The request as the Messages API documents it, built apart from the encoder: consecutive blocks of
    one role in one message, a breakpoint as `cache_control`."""
    messages = []
    for b in model_input.blocks:
        content = {"type": "text", "text": b.text}
        if b.breakpoint:
            content["cache_control"] = {"type": "ephemeral", "ttl": "1h"} if b.ttl is Ttl.ONE_HOUR \
                else {"type": "ephemeral"}
        if messages and messages[-1]["role"] == b.role:
            messages[-1]["content"].append(content)
        else:
            messages.append({"role": b.role, "content": [content]})
    system = [{"type": "text", "text": model_input.system, "cache_control": {"type": "ephemeral"}}]
    return {"model": MODEL, "max_tokens": MAX, "stream": True, "system": system, "messages": messages}


# what Threadfork sent for this input before the two encoders became one (captured from the old
# RequestEncoder): a byte changed here would cost every session its prompt cache once
SENT = (b'{"model":"claude-opus-4-5","max_tokens":100,"stream":true,"output_config":{"effort":"high"},'
        b'"system":[{"type":"text","text":"sys","cache_control":{"type":"ephemeral"}}],'
        b'"tools":[{"type":"web_search_20250305","name":"web_search","max_uses":5},{"type":"mcp_toolset",'
        b'"mcp_server_name":"gh","default_config":{"enabled":false},"configs":{"a":{"enabled":true}}}],'
        b'"mcp_servers":[{"type":"url","url":"https://x/mcp","name":"gh","authorization_token":"a-token"}],'
        b'"messages":[{"role":"user","content":[{"type":"text","text":"<@U1> \xc3\xa9\\n\\"hi\\"\\t"},'
        b'{"type":"text","text":"b","cache_control":{"type":"ephemeral","ttl":"1h"}}]},'
        b'{"role":"assistant","content":[{"type":"text","text":"c"}]},'
        b'{"role":"user","content":[{"type":"text","text":"d","cache_control":{"type":"ephemeral"}}]}]}')
EVERYTHING = ModelInput("sys", (block("user", '<@U1> é\n"hi"\t'), Block("user", "b", True, ttl=Ttl.ONE_HOUR),
                                block("assistant", "c"), block("user", "d", True)),
                        model="claude-opus-4-5", tools=("web_search",),
                        connectors=(Connector("gh", "https://x/mcp", ("a",)),), tokens={"gh": "a-token"},
                        effort="high")


def test_a_request_is_byte_for_byte_what_threadfork_has_always_sent():
    assert RequestEncoder(MODEL, MAX).encode(EVERYTHING) == SENT
    assert RequestEncoder(MODEL, MAX).encode(EVERYTHING) == plain_json(RequestEncoder(MODEL, MAX).request(EVERYTHING))


def test_a_paused_answer_is_handed_back_as_the_last_message_its_thinking_byte_for_byte():
    encoder = RequestEncoder(MODEL, MAX)
    so_far = [{"type": "thinking", "thinking": "Let me look é", "signature": "EqQBCkgIARABGAIiQ=="},
              {"type": "server_tool_use", "id": "srvtoolu_01", "name": "web_search", "input": {"query": "x"}},
              {"type": "text", "text": "Searching"}]
    body = encoder.encode(EVERYTHING, [{"role": "assistant", "content": so_far}])
    # the request as it was, one assistant message added before its closing `]}`
    assert body == SENT[:-2] + b"," + plain_json({"role": "assistant", "content": so_far}) + b"]}"
    assert json.loads(body)["messages"][-1]["content"][0]["signature"] == "EqQBCkgIARABGAIiQ=="


texts = st.text(max_size=16)  # any text: non-ASCII, quotes, backslashes, control characters
pool = [block(role, text) for role in ("user", "assistant") for text in ("x", "y", "ü", '"q"\n')]
blocks = st.one_of(st.sampled_from(pool), st.builds(Block, st.sampled_from(["user", "assistant"]), texts,
                                                    st.booleans(), ttl=st.sampled_from(list(Ttl))))


@settings(max_examples=300, deadline=None)
@given(st.lists(st.lists(blocks, min_size=1, max_size=12), min_size=1, max_size=6), texts)
def test_any_history_encodes_to_the_plain_json_of_its_request(histories, system):
    """Shared, reordered, new and equal-but-new blocks, breakpoints, in any order of requests from one
    encoder: each request's bytes are exactly the plain JSON encoding of the request the API documents."""
    encoder = RequestEncoder(MODEL, MAX)
    for history in histories:
        model_input = ModelInput(system, tuple(history))
        assert encoder.encode(model_input) == plain_json(reference(model_input))


def test_a_channels_model_tools_and_instructions_reach_the_wire():
    from bot.domain.context import SYSTEM_PROMPT, Block

    base = ModelInput(SYSTEM_PROMPT, (Block("user", "hello", breakpoint=True),))
    chosen = base.configured("Answer in French.", "claude-haiku-5-5", ("web_search",))
    encoder = RequestEncoder(MODEL, MAX, [{"type": "web_fetch_20250910", "name": "web_fetch", "max_uses": 5}])
    body = wire(encoder, chosen)
    assert body["model"] == "claude-haiku-5-5"
    assert body["tools"] == [{"type": "web_search_20250305", "name": "web_search", "max_uses": 5}]
    assert body["system"][0]["text"].startswith(SYSTEM_PROMPT) and body["system"][0]["text"].endswith(
        "\nAnswer in French.")
    none = wire(encoder, base.configured(None, None, ()))
    assert "tools" not in none and none["model"] == MODEL and none["system"][0]["text"] == SYSTEM_PROMPT
    default = wire(encoder, base)
    assert default["tools"][0]["name"] == "web_fetch"
