"""The fake's rules for mid-conversation system messages (tests/fakes/system_message_rules.py), and the requests
Threadfork builds with one: a model that takes them gets one, valid, after the last user message."""
from bot.domain.context import Block, ModelInput
from bot.llm.claude import RequestEncoder
from tests.fakes.messages_rules import refusal

OPUS = "claude-opus-4-8"


def request(model, *messages):
    return {"model": model, "max_tokens": 100, "messages": list(messages)}


def user(text="hi"):
    return {"role": "user", "content": [{"type": "text", "text": text}]}


def assistant(text="hello", last=None):
    return {"role": "assistant", "content": [{"type": "text", "text": text}, *([last] if last else [])]}


def system(text="note"):
    return {"role": "system", "content": [{"type": "text", "text": text}]}


def test_a_system_message_after_the_last_user_message_is_taken_on_opus_4_8():
    assert refusal(request(OPUS, user(), assistant(), user(), system())) is None
    assert refusal(request(OPUS, user(), system(), assistant())) is None  # followed by an assistant turn


def test_other_models_refuse_the_system_role():
    found = refusal(request("claude-sonnet-5-5", user(), system()))
    assert found and "role 'system' is not supported on this model" in found
    assert "not supported" in refusal(request("claude-opus-4-7", user(), system()))


def test_a_system_message_must_follow_a_user_message_or_a_server_tool_use():
    assert "must immediately follow a user message" in refusal(request(OPUS, user(), assistant(), system()))
    assert "must immediately follow a user message" in refusal(request(OPUS, system(), user()))
    server_use = {"type": "server_tool_use", "id": "srvtoolu_1", "name": "web_search", "input": {"query": "x"}}
    assert refusal(request(OPUS, user(), assistant(last=server_use), system())) is None


def test_a_system_message_must_be_last_or_followed_by_an_assistant_message():
    assert "must be the last message or be followed by an assistant message" in \
        refusal(request(OPUS, user(), system(), user()))


def test_two_system_messages_in_a_row_are_refused():
    assert "consecutive system messages" in refusal(request(OPUS, user(), system("a"), system("b")))


def test_the_encoder_sends_the_late_system_text_as_one_system_message_after_the_last_user_block():
    base = ModelInput("prompt", (Block("user", "one"), Block("assistant", "two"), Block("user", "three", True)),
                      late_system="[Memory saved since …]")
    body = RequestEncoder(OPUS, 100).request(base)
    assert body["messages"][-1] == {"role": "system", "content": [{"type": "text", "text": "[Memory saved since …]"}]}
    assert body["messages"][-2]["role"] == "user" and refusal(body) is None
    assert RequestEncoder(OPUS, 100).request(ModelInput("prompt", base.blocks))["messages"][-1]["role"] == "user"
