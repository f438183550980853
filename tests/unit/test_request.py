"""The request encoder reuses earlier requests' encoded messages only where they are provably unchanged."""
import json

from hypothesis import given, settings
from hypothesis import strategies as st

from bot.domain.context import Block, ModelInput
from bot.llm.request import RequestEncoder, build_request

MODEL, MAX = "claude-test", 100


def block(role, text, breakpoint=False):
    return Block(role, text, breakpoint)


def wire(encoder, model_input):
    return json.loads(encoder.encode(model_input))


def test_an_encoded_request_is_the_request_the_messages_api_expects():
    model_input = ModelInput("sys", (block("user", "a"), block("user", "b"), block("assistant", "c", True)))
    assert wire(RequestEncoder(MODEL, MAX), model_input) == build_request(MODEL, MAX, model_input)


def test_a_sessions_next_request_reuses_its_history_and_is_still_exact():
    encoder = RequestEncoder(MODEL, MAX)
    history = (block("user", "q1"), block("assistant", "a1"), block("user", "q2"), block("assistant", "a2"))
    first = ModelInput("sys", history + (block("user", "q3", True),))
    encoder.encode(first)
    [kept] = encoder._kept[id(history[0])]
    # all but the last two messages: the settled history's breakpoint may sit on the one before the last
    assert kept.blocks == history[:3] and all(a is b for a, b in zip(kept.blocks, history))
    second = ModelInput("sys", history + (block("user", "q3"), block("assistant", "a3"), block("user", "q4", True)))
    assert encoder._reusable(second.blocks).blocks == history[:3]  # reused, not re-encoded
    assert wire(encoder, second) == build_request(MODEL, MAX, second)


def test_a_settled_history_breakpoint_moving_on_does_not_stop_the_reuse():
    encoder = RequestEncoder(MODEL, MAX)
    history = (block("user", "q1"), block("assistant", "a1"), block("user", "q2"))
    encoder.encode(ModelInput("sys", history + (block("assistant", "a2", True), block("user", "q3", True))))
    following = history + (block("assistant", "a2"), block("user", "q3"), block("assistant", "a3", True),
                           block("user", "q4", True))
    reused = encoder._reusable(following)
    assert reused.blocks == history and all(a is b for a, b in zip(reused.blocks, history))
    assert wire(encoder, ModelInput("sys", following)) == build_request(MODEL, MAX, ModelInput("sys", following))


def test_an_inherited_forks_first_request_reuses_its_parents_encoding():
    encoder = RequestEncoder(MODEL, MAX)
    parent = (block("user", "q1"), block("assistant", "a1"), block("user", "q2"), block("assistant", "a2"))
    encoder.encode(ModelInput("sys", parent + (block("user", "q3", True),)))
    fork = parent[:-1] + (block("assistant", "a2", True), block("user", "[boundary]"), block("user", "f1", True))
    assert encoder._reusable(fork).blocks == parent[:3]  # every whole message both share
    assert wire(encoder, ModelInput("sys", fork)) == build_request(MODEL, MAX, ModelInput("sys", fork))


def test_a_changed_block_in_the_middle_is_re_encoded():
    encoder = RequestEncoder(MODEL, MAX)
    history = [block("user", "q1"), block("assistant", "a1"), block("user", "q2"), block("assistant", "a2")]
    encoder.encode(ModelInput("sys", tuple(history) + (block("user", "q3", True),)))
    history[2] = block("user", "q2 edited")  # an edit renders to a new block object
    changed = ModelInput("sys", tuple(history) + (block("user", "q3", True),))
    assert wire(encoder, changed) == build_request(MODEL, MAX, changed)


def test_the_kept_bytes_stay_within_the_budget():
    encoder = RequestEncoder(MODEL, MAX, budget=2_000)
    for key in range(20):
        blocks = tuple(block("user" if i % 2 == 0 else "assistant", f"{key}-{i} " * 20) for i in range(6))
        encoder.encode(ModelInput("sys", blocks))
    assert 0 < encoder._size <= 2_000 and len(encoder._kept) < 20


texts = st.sampled_from(["a", "b", "é", "line\nbreak", '"quoted"', ""])
pool = [block(role, text) for role in ("user", "assistant") for text in ("x", "y", "z", "ü")]


@settings(max_examples=300, deadline=None)
@given(st.lists(st.tuples(st.lists(st.sampled_from(range(len(pool))), min_size=1, max_size=8), st.booleans(),
                          texts), min_size=1, max_size=8))
def test_any_sequence_of_requests_encodes_exactly_what_a_fresh_encoding_gives(requests):
    """Shared blocks, reordered blocks, new and equal-but-new blocks, breakpoints, several requests
    starting with the same block, in any order: byte reuse never changes what goes on the wire."""
    encoder = RequestEncoder(MODEL, MAX)
    for picks, mark_last, tail in requests:
        blocks = [pool[i] for i in picks] + [block("user", tail, mark_last)]
        model_input = ModelInput("sys", tuple(blocks))
        assert wire(encoder, model_input) == build_request(MODEL, MAX, model_input)


def test_a_channels_model_tools_and_instructions_reach_the_wire_exactly_as_the_reference_builds_them():
    from bot.domain.context import SYSTEM_PROMPT, Block

    base = ModelInput(SYSTEM_PROMPT, (Block("user", "hello", breakpoint=True),))
    chosen = base.configured("Answer in French.", "claude-haiku-5-5", ("web_search",))
    encoder = RequestEncoder(MODEL, MAX, [{"type": "web_fetch_20250910", "name": "web_fetch", "max_uses": 5}])
    body = wire(encoder, chosen)
    assert body == build_request(MODEL, MAX, chosen)
    assert body["model"] == "claude-haiku-5-5"
    assert body["tools"] == [{"type": "web_search_20250305", "name": "web_search", "max_uses": 5}]
    assert body["system"][0]["text"].startswith(SYSTEM_PROMPT) and body["system"][0]["text"].endswith(
        "\nAnswer in French.")
    none = wire(encoder, base.configured(None, None, ()))
    assert "tools" not in none and none["model"] == MODEL and none["system"][0]["text"] == SYSTEM_PROMPT
    default = wire(encoder, base)
    assert default["tools"][0]["name"] == "web_fetch"
