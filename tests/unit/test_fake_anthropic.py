"""The fake Messages API refuses what the real one refuses, with the API's own error shape."""
import json
import urllib.error
import urllib.request

import pytest

from tests.fakes.anthropic_api import FakeAnthropic
from tests.fakes.messages_rules import breakpoints, refusal


def text(value, cached=False):
    block = {"type": "text", "text": value}
    return {**block, "cache_control": {"type": "ephemeral"}} if cached else block


def request(*messages, system=None, **fields):
    body = {"model": "claude-test", "max_tokens": 100, "messages": list(messages), **fields}
    if system is not None:
        body["system"] = system
    return body


def user(*blocks):
    return {"role": "user", "content": list(blocks)}


def assistant(*blocks):
    return {"role": "assistant", "content": list(blocks)}


@pytest.mark.parametrize("body, message", [
    (request(user(text(""))), "messages: text content blocks must be non-empty"),
    (request(user(text("hi")), assistant(text("")), user(text("again"))),
     "messages: text content blocks must be non-empty"),
    (request(user(text(" \n\t"))), "messages: text content blocks must contain non-whitespace text"),
    (request(user(text("hi")), system=[text("")]), "system: text content blocks must be non-empty"),
    (request(), "messages: at least one message is required"),
    (request(assistant(text("hello")), user(text("hi"))), 'messages: first message must use the "user" role'),
    (request(user()), "messages.0: all messages must have non-empty content except for the optional final "
                      "assistant message"),
    (request(user(text("hi")), assistant(text("prefill "))),
     "messages: final assistant content cannot end with trailing whitespace"),
    (request(user({"type": "txet", "text": "hi"})),
     "messages.0.content.0: Input tag 'txet' found using 'type' does not match any of the expected tags: "
     "'text', 'image', 'document', 'search_result', 'thinking', 'redacted_thinking', 'tool_use', "
     "'tool_result', 'server_tool_use', 'web_search_tool_result', 'web_fetch_tool_result'"),
    (request(user({"type": "text"})), "messages.0.content.0.text: Field required"),
    (request(user({"type": "text", "text": 42})), "messages.0.content.0.text: Input should be a valid string"),
    (request(user({"type": "text", "text": "hi", "speaker": "x"})),
     "messages.0.content.0.speaker: Extra inputs are not permitted"),
    (request(user(text("a", True), text("b", True), text("c", True), text("d", True)),
             system=[text("s", True)]),
     "A maximum of 4 blocks with cache_control may be provided. Found 5."),
    ({"model": "m", "messages": [user(text("hi"))]}, "max_tokens: Field required"),
    ({"model": "m", "max_tokens": 10}, "messages: Field required"),
])
def test_what_the_messages_api_refuses_is_refused_with_its_message(body, message):
    assert refusal(body) == message


def test_what_the_messages_api_accepts_is_accepted():
    body = request(user(text("a", True)), assistant(text("b")), user(text("c", True), text("d", True)),
                   system=[text("s", True)])
    assert breakpoints(body) == 4 and refusal(body) is None
    assert refusal(request({"role": "user", "content": "plain string"})) is None
    assert refusal(request(user(text("hi")), assistant(text("final, no trailing space")))) is None


def test_a_refused_request_is_answered_400_recorded_and_uses_no_script():
    fake = FakeAnthropic().start()
    try:
        bad = json.dumps(request(user(text("hi")), assistant(text("")), user(text("again")))).encode()
        post = urllib.request.Request(fake.url + "/v1/messages", data=bad, headers={"Content-Type": "application/json"})
        with pytest.raises(urllib.error.HTTPError) as refused:
            urllib.request.urlopen(post, timeout=5)
        assert refused.value.code == 400
        answer = json.loads(refused.value.read())
        assert answer["type"] == "error" and answer["error"] == {
            "type": "invalid_request_error", "message": "messages: text content blocks must be non-empty"}
        assert fake.rejections == ["request 1: messages: text content blocks must be non-empty"]
    finally:
        fake.stop()


def test_a_client_that_closes_its_stream_is_noticed_and_sent_nothing_more():
    import socket
    import time

    from tests.fakes.anthropic_api import Script

    fake = FakeAnthropic().start()
    try:
        fake.script(Script(text="x" * 200, chunks=20, chunk_delay=0.05))
        host, port = fake.url.removeprefix("http://").split(":")
        body = json.dumps(request(user(text("hi")), stream=True)).encode()
        client = socket.create_connection((host, int(port)))
        client.sendall(b"POST /v1/messages HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\n"
                       + f"Content-Length: {len(body)}\r\n\r\n".encode() + body)
        seen = b""
        while seen.count(b"text_delta") < 3:
            seen += client.recv(4096)
        client.shutdown(socket.SHUT_RDWR)  # the client goes, as the SDK's stream does when it is closed
        client.close()
        deadline = time.monotonic() + 5
        while 0 not in fake.cancelled and time.monotonic() < deadline:
            time.sleep(0.01)
        cancelled = fake.cancelled[0]
        assert 3 <= cancelled.deltas < 20  # it stopped generating: the rest was never sent
        assert 0 not in fake.finished_at or fake.finished_at[0] >= cancelled.at
        time.sleep(0.2)
        assert fake.cancelled[0] == cancelled and fake.rejections == []
    finally:
        fake.stop()


def test_a_stream_read_to_its_end_is_not_cancelled():
    from tests.fakes.anthropic_api import Script

    fake = FakeAnthropic().start()
    try:
        fake.script(Script(text="all of it", chunks=3))
        body = json.dumps(request(user(text("hi")), stream=True)).encode()
        with urllib.request.urlopen(urllib.request.Request(fake.url + "/v1/messages", data=body, headers={
                "content-type": "application/json"})) as response:
            assert response.read().count(b"text_delta") == 3
        assert fake.cancelled == {}
    finally:
        fake.stop()
