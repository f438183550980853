"""The fake Messages API streams scripted web search and web fetch exactly as the real API does:
every event it sends parses as the anthropic SDK's own event models, with no field they lack, and
the SDK's stream accumulates them into the tool-using message the script describes."""
import json
import urllib.request

import anthropic
import pytest
from anthropic.types import Message, RawMessageStreamEvent
from pydantic import BaseModel, TypeAdapter

from tests.fakes.anthropic_api import Cited, FakeAnthropic, Fetch, Script, Search

SEARCH = {"type": "web_search_20250305", "name": "web_search", "max_uses": 5}
FETCH = {"type": "web_fetch_20250910", "name": "web_fetch", "max_uses": 2}
EVENTS = TypeAdapter(RawMessageStreamEvent)
RESEARCH = Script(
    preface="Let me look that up.",
    tools=[Search("python 3.14 release date", results=[("https://python.org/downloads", "Python Releases", "2 days ago"),
                                                        ("https://peps.python.org/pep-0745/", "PEP 745")]),
           Fetch("https://peps.python.org/pep-0745/", title="PEP 745 – Python 3.14 Release Schedule",
                 text="3.14.0 final: 2025-10-07")],
    text="Python 3.14 came out in October 2025. ",
    cited=[Cited("It was released on 7 October 2025.", "https://peps.python.org/pep-0745/",
                 cited_text="3.14.0 final: 2025-10-07"), " See the release page."])


@pytest.fixture
def fake():
    running = FakeAnthropic().start()
    yield running
    running.stop()
    assert running.rejections == []


@pytest.fixture
def client(fake):
    return anthropic.Anthropic(api_key="sk-ant-test-key-not-real", base_url=fake.url, max_retries=0)


def body(tools=(SEARCH, FETCH), question="When did Python 3.14 come out?", **fields):
    request = {"model": "claude-test", "max_tokens": 500, "messages": [{"role": "user", "content": question}], **fields}
    if tools is not None:
        request["tools"] = list(tools)
    return request


def raw_events(fake, request) -> list[dict]:
    post = urllib.request.Request(fake.url + "/v1/messages", data=json.dumps({**request, "stream": True}).encode(),
                                  headers={"Content-Type": "application/json"})
    with urllib.request.urlopen(post, timeout=5) as response:
        stream = response.read().decode()
    events = []
    for chunk in stream.strip().split("\n\n"):
        name, data = chunk.split("\n", 1)
        event = json.loads(data.removeprefix("data: "))
        assert name == f"event: {event['type']}"
        events.append(event)
    return events


def no_extras(model, where="event") -> list[str]:
    """Fields a parsed model did not declare, anywhere inside it."""
    found = [f"{where}.{key}" for key in (model.model_extra or {})] if isinstance(model, BaseModel) else []
    children = (model.__dict__.items() if isinstance(model, BaseModel)
                else enumerate(model) if isinstance(model, list) else [])
    for key, child in children:
        found += no_extras(child, f"{where}.{key}")
    return found


def test_every_streamed_event_is_one_of_the_sdks_event_models_exactly(fake):
    fake.script(RESEARCH)
    events = raw_events(fake, body())
    for event in events:
        parsed = EVENTS.validate_python(event)
        assert no_extras(parsed) == [], event
        assert parsed.model_dump(exclude_unset=True) == event
    starts = [e["content_block"]["type"] for e in events if e["type"] == "content_block_start"]
    assert starts == ["text", "server_tool_use", "web_search_tool_result", "server_tool_use", "web_fetch_tool_result",
                      "text", "text", "text"]
    tool_start = next(e for e in events if e["type"] == "content_block_start"
                      and e["content_block"]["type"] == "server_tool_use")
    assert tool_start["content_block"]["input"] == {} and tool_start["content_block"]["id"].startswith("srvtoolu_")
    partial = "".join(e["delta"]["partial_json"] for e in events if e["type"] == "content_block_delta"
                      and e["index"] == tool_start["index"])
    assert json.loads(partial) == {"query": "python 3.14 release date"}
    cited = next(e for e in events if e["type"] == "content_block_start" and "citations" in e["content_block"])
    following = [e["delta"]["type"] for e in events if e.get("index") == cited["index"] and e["type"] == "content_block_delta"]
    assert cited["content_block"] == {"type": "text", "text": "", "citations": []}
    assert following[0] == "citations_delta" and set(following[1:]) == {"text_delta"}
    assert events[0]["message"]["usage"]["server_tool_use"] == {"web_search_requests": 0, "web_fetch_requests": 0}
    assert events[-2]["usage"]["server_tool_use"] == {"web_search_requests": 1, "web_fetch_requests": 1}
    assert events[-2]["delta"]["stop_reason"] == "end_turn" and events[-1] == {"type": "message_stop"}


def test_the_sdk_stream_accumulates_the_tool_using_answer(fake, client):
    fake.script(RESEARCH)
    with client.messages.stream(**body()) as stream:
        texts = list(stream.text_stream)
        final = stream.get_final_message()
    assert "".join(texts) == ("Let me look that up.Python 3.14 came out in October 2025. "
                              "It was released on 7 October 2025. See the release page.")
    kinds = [block.type for block in final.content]
    assert kinds == ["text", "server_tool_use", "web_search_tool_result", "server_tool_use", "web_fetch_tool_result",
                     "text", "text", "text"]
    search, results, fetch, fetched = final.content[1:5]
    assert (search.name, search.input) == ("web_search", {"query": "python 3.14 release date"})
    assert results.tool_use_id == search.id
    assert [(r.url, r.title, r.page_age) for r in results.content] == [
        ("https://python.org/downloads", "Python Releases", "2 days ago"),
        ("https://peps.python.org/pep-0745/", "PEP 745", None)]
    assert all(r.encrypted_content for r in results.content)
    assert (fetch.name, fetch.input) == ("web_fetch", {"url": "https://peps.python.org/pep-0745/"})
    assert fetched.content.url == fetch.input["url"] and fetched.content.retrieved_at
    assert fetched.content.content.source.data == "3.14.0 final: 2025-10-07"
    [citation] = final.content[6].citations
    assert (citation.type, citation.url, citation.title, citation.cited_text) == (
        "web_search_result_location", "https://peps.python.org/pep-0745/", "PEP 745", "3.14.0 final: 2025-10-07")
    assert citation.encrypted_index and final.content[7].citations is None
    assert (final.usage.server_tool_use.web_search_requests, final.usage.server_tool_use.web_fetch_requests) == (1, 1)


def test_a_plain_request_gets_the_same_message_whole(fake, client):
    fake.script(RESEARCH)
    message = client.messages.create(**body())
    assert no_extras(Message.model_validate(message.model_dump(exclude_unset=True))) == []
    assert [b.type for b in message.content][1:5] == ["server_tool_use", "web_search_tool_result", "server_tool_use",
                                                      "web_fetch_tool_result"]
    assert message.usage.server_tool_use.web_search_requests == 1


def test_without_scripted_tools_an_answer_uses_none_and_without_tools_in_the_request_there_is_no_tool_usage(fake, client):
    offered = client.messages.create(**body())
    assert [b.type for b in offered.content] == ["text"] and offered.content[0].text == "Answer 1"
    assert offered.usage.server_tool_use.web_search_requests == 0
    fake.script(RESEARCH)
    plain = client.messages.create(**body(tools=None))
    assert [b.type for b in plain.content] == ["text", "text", "text", "text"]  # the model cannot call them
    assert plain.usage.server_tool_use is None
    assert fake.tools_sent == [[SEARCH, FETCH], None]


def test_uses_past_max_uses_and_fetches_of_unseen_urls_get_the_apis_error_results(fake, client):
    fake.script(Script(text="Done.", tools=[
        Search("one", results=[("https://a.example/", "A")]), Search("two"), Search("three"),
        Fetch("https://a.example/"), Fetch("https://nowhere.example/"), Fetch("https://a.example/", error="url_not_accessible")]))
    message = client.messages.create(**body(tools=[{**SEARCH, "max_uses": 2}, {**FETCH, "max_uses": 3}]))
    results = [b.content for b in message.content if b.type.endswith("_tool_result")]
    assert isinstance(results[0], list) and results[1] == []
    assert results[2].error_code == "max_uses_exceeded"
    assert results[3].type == "web_fetch_result"
    assert results[4].error_code == "url_not_in_prior_context"
    assert results[5].error_code == "url_not_accessible"
    assert (message.usage.server_tool_use.web_search_requests, message.usage.server_tool_use.web_fetch_requests) == (2, 1)
    fake.script(Script(text="Found it.", tools=[Fetch("https://given.example/page")]))
    given = client.messages.create(**body(question="Summarise https://given.example/page"))
    assert [b.content.type for b in given.content if b.type == "web_fetch_tool_result"] == ["web_fetch_result"]


def test_a_paused_turn_and_a_search_error_stream_as_the_api_sends_them(fake, client):
    fake.script(Script(preface="Searching.", tools=[Search("x", error="too_many_requests")], stop_reason="pause_turn",
                       text=""))
    with client.messages.stream(**body()) as stream:
        final = stream.get_final_message()
    assert final.stop_reason == "pause_turn"
    assert final.content[2].content.type == "web_search_tool_result_error"
    assert final.content[2].content.error_code == "too_many_requests"


def test_a_script_citing_a_url_no_search_returned_is_a_mistake_caught_at_once():
    with pytest.raises(ValueError):
        Script(tools=[Search("q", results=[("https://a.example/", "A")])], cited=[Cited("claim", "https://b.example/")])
    with pytest.raises(ValueError):
        Search("q", error="timeout")
    with pytest.raises(ValueError):
        Fetch("https://a.example/", error="forbidden")
