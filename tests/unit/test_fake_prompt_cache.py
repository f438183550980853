"""The fake Messages API's prompt cache against what platform.claude.com "Prompt caching" documents: a
prefix cached at each breakpoint and keyed by its content, read back within its 5-minute or 1-hour life
(refreshed by each hit), nothing cached under the minimum length, hits found 20 blocks back and no
further, usage split by TTL as the "Mixing different TTLs" positions A, B and C say, and the order rule
refused with the API's message — on a clock the test moves."""
import json
import urllib.request

import anthropic
import pytest

from tests.fakes.anthropic_api import FakeAnthropic, Script
from tests.fakes.messages_rules import refusal
from tests.fakes.prompt_cache import DEFAULT_MINIMUM, PromptCache, minimum_tokens, prompt_boundaries

from .test_fake_anthropic import assistant, request, user

BOOK = "It is a truth universally acknowledged, that a single man in possession of a good fortune. " * 200


def marked(text, ttl=None):
    control = {"type": "ephemeral", **({"ttl": ttl} if ttl else {})}
    return {"type": "text", "text": text, "cache_control": control}


def plain(text):
    return {"type": "text", "text": text}


def ask(*messages, system=None, model="claude-sonnet-5-5"):
    return request(*messages, system=system, model=model)


def tokens_through(request, block_index):
    return prompt_boundaries(request, {})[0][block_index].tokens


@pytest.fixture
def cache():
    return PromptCache()


def test_a_long_system_prompt_is_written_once_then_read_and_only_the_question_is_input(cache):
    first = ask(user(plain("Analyze the major themes.")), system=[marked(BOOK)])
    written = cache.use(first)
    cached = tokens_through(first, 0)
    assert cached >= DEFAULT_MINIMUM
    assert (written["cache_creation_input_tokens"], written["cache_read_input_tokens"]) == (cached, 0)
    assert written["cache_creation"] == {"ephemeral_5m_input_tokens": cached, "ephemeral_1h_input_tokens": 0}
    again = cache.use(ask(user(plain("Now the characters.")), system=[marked(BOOK)]))
    assert (again["cache_read_input_tokens"], again["cache_creation_input_tokens"]) == (cached, 0)
    total = prompt_boundaries(first, {})[1]
    assert written["input_tokens"] == total - cached  # what comes after the last breakpoint


def test_a_prefix_under_the_minimum_cacheable_length_is_not_cached_and_not_refused(cache):
    short = ask(user(marked("A short question.")), system=[marked("Be brief.")])
    assert refusal(short) is None
    assert cache.use(short)["cache_creation_input_tokens"] == 0
    assert cache.use(short)["cache_read_input_tokens"] == 0
    assert minimum_tokens("claude-opus-4-6") == 4096 and minimum_tokens("claude-haiku-4-5-20251001") == 4096


def test_a_five_minute_entry_lives_five_minutes_from_its_last_use(cache):
    request = ask(user(marked(BOOK)))
    cache.use(request)
    cache.clock.advance(minutes=4)
    assert cache.use(request)["cache_read_input_tokens"] > 0  # a hit, which refreshes it
    cache.clock.advance(minutes=4)
    assert cache.use(request)["cache_read_input_tokens"] > 0  # 8 minutes after the write, 4 after the hit
    cache.clock.advance(minutes=5, seconds=1)
    assert cache.use(request)["cache_read_input_tokens"] == 0  # expired: written again


def test_a_one_hour_entry_outlives_a_meeting_and_not_an_afternoon(cache):
    request = ask(user(marked(BOOK, "1h")))
    written = cache.use(request)
    assert written["cache_creation"]["ephemeral_1h_input_tokens"] == written["cache_creation_input_tokens"] > 0
    cache.clock.advance(minutes=50)
    assert cache.use(request)["cache_read_input_tokens"] > 0
    cache.clock.advance(minutes=61)
    assert cache.use(request)["cache_read_input_tokens"] == 0


def test_the_ttl_is_no_part_of_the_cached_content_but_every_earlier_byte_is(cache):
    cache.use(ask(user(marked(BOOK))))
    assert cache.use(ask(user(marked(BOOK, "1h"))))["cache_read_input_tokens"] > 0
    assert cache.use(ask(user(marked(BOOK + "!"))))["cache_read_input_tokens"] == 0
    assert cache.use(ask(user(marked(BOOK)), model="claude-opus-5-5"))["cache_read_input_tokens"] == 0


def conversation(turns: int) -> list[dict]:
    """A long opening question, then `turns` short exchanges: one block each."""
    messages = [user(plain(BOOK)), assistant(plain("First answer."))]
    for n in range(turns):
        messages += [user(plain(f"Question {n}?")), assistant(plain(f"Answer {n}."))]
    return messages


def with_final_breakpoint(messages):
    *earlier, last = messages
    blocks = last["content"][:-1] + [{**last["content"][-1], "cache_control": {"type": "ephemeral"}}]
    return ask(*earlier, {**last, "content": blocks})


def later(messages: list[dict], blocks: int) -> list[dict]:
    """The conversation `blocks` blocks on (one block a message, roles alternating)."""
    role = "assistant" if messages[-1]["role"] == "user" else "user"
    more = []
    for n in range(blocks):
        more.append({"role": role, "content": [plain(f"later {n}")]})
        role = "user" if role == "assistant" else "assistant"
    return messages + more


@pytest.mark.parametrize("blocks_on, read", [(1, True), (19, True), (20, False)])
def test_a_breakpoint_finds_the_previous_one_if_it_lies_within_its_twenty_blocks(cache, blocks_on, read):
    before = conversation(3) + [user(plain("Next?"))]
    cache.use(with_final_breakpoint(before))
    hit = cache.use(with_final_breakpoint(later(before, blocks_on)))
    expected = tokens_through(with_final_breakpoint(before), len(before) - 1) if read else 0
    assert hit["cache_read_input_tokens"] == expected


def test_mixed_ttls_bill_the_hour_up_to_its_last_breakpoint_and_five_minutes_beyond(cache):
    """The page's positions: A the longest hit, B the last 1-hour breakpoint after A, C the last breakpoint."""
    request = ask(user(plain(BOOK), marked("Remember this chapter.", "1h")), assistant(plain(BOOK)),
                  user(marked("And this question.")), system=[marked(BOOK, "1h")])
    a, b, c = 0, tokens_through(request, 2), tokens_through(request, 4)
    first = cache.use(request)
    assert first["cache_creation"] == {"ephemeral_1h_input_tokens": b - a, "ephemeral_5m_input_tokens": c - b}
    cache.clock.advance(minutes=20)  # the 5-minute tail expired, the hour's entries live
    later = cache.use(request)
    assert later["cache_read_input_tokens"] == b
    assert later["cache_creation"] == {"ephemeral_1h_input_tokens": 0, "ephemeral_5m_input_tokens": c - b}
    assert cache.use(request)["cache_read_input_tokens"] == c


@pytest.mark.parametrize("request_body, path", [
    (ask(user(marked(BOOK, "1h"))), None),
    (ask(user(marked("q")), system=[marked(BOOK, "1h")]), None),
    (ask(user(marked("q", "1h")), system=[marked(BOOK)]), "messages.0.content.0"),
    (ask(user(marked("a"), plain("b"), marked("c", "1h"))), "messages.0.content.2"),
    (ask(user(marked("q", "5m"), marked("r", "1h"))), "messages.0.content.1"),
])
def test_a_one_hour_breakpoint_after_a_five_minute_one_is_refused_as_the_api_refuses_it(request_body, path):
    expected = None if path is None else (
        f"{path}.cache_control.ttl: a ttl='1h' cache_control block must not come after a ttl='5m' cache_control "
        "block. Note that blocks are processed in the following order: `tools`, `system`, `messages`.")
    assert refusal(request_body) == expected


def test_an_unknown_ttl_or_a_stray_key_in_cache_control_is_refused():
    assert refusal(ask(user(marked("q", "2h")))) == "messages.0.content.0.cache_control.ttl: Input should be '5m' or '1h'"
    odd = {"type": "text", "text": "q", "cache_control": {"type": "ephemeral", "scope": "x"}}
    assert refusal(ask(user(odd))) == "messages.0.content.0.cache_control.scope: Extra inputs are not permitted"


def test_the_streamed_usage_carries_the_split_by_ttl_and_the_sdk_reads_it():
    fake = FakeAnthropic().start()
    try:
        client = anthropic.Anthropic(api_key="test", base_url=fake.url, max_retries=0)
        body = ask(user(marked(BOOK, "1h")))
        fake.script(Script(text="ok"))
        with client.messages.stream(**{k: v for k, v in body.items()}) as stream:
            message = stream.get_final_message()
        assert message.usage.cache_creation.ephemeral_1h_input_tokens == message.usage.cache_creation_input_tokens > 0
        assert fake.usages[0]["cache_creation"]["ephemeral_1h_input_tokens"] > 0
        fake.cache.clock.advance(minutes=30)
        raw = urllib.request.urlopen(urllib.request.Request(
            f"{fake.url}/v1/messages", data=json.dumps(body).encode(),
            headers={"content-type": "application/json", "x-api-key": "test"})).read()
        assert json.loads(raw)["usage"]["cache_read_input_tokens"] == message.usage.cache_creation_input_tokens
    finally:
        fake.stop()
