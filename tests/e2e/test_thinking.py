"""Thinking, as the API wants it: Claude Sonnet 5.5 thinks on a request without a `thinking` field; its signed
thinking blocks go back byte for byte when a paused answer is continued, and never into later turns' text."""
import json

from ..fakes.anthropic_api import Script, Search
from ..harness import CHANNEL, wait_until

import pytest

RESEARCH = {"threadfork_tools": "web_search"}
PAGE = "https://example.org/pg18"


def test_a_sonnet_5_5_request_has_no_thinking_field_and_its_answer_thinks_before_the_text(bot, slack, claude):
    claude.script(Script(text="Blue, by Rayleigh scattering."))
    bot.say("UALICE01", "why is the sky blue?", mention=True)
    wait_until(lambda: claude.requests)
    bot.settled()
    [request] = claude.requests
    assert request["model"] == "claude-sonnet-5-5" and "thinking" not in request
    assert [b["type"] for b in claude.answers[0]] == ["thinking", "text"]
    [answer] = slack.posts(CHANNEL, top_level=True)
    assert answer.shown == "Blue, by Rayleigh scattering."  # the (empty, signed) thinking is never shown


@pytest.mark.settings(**RESEARCH)
def test_a_paused_answer_is_continued_with_every_thinking_block_and_its_signature_byte_for_byte(bot, slack, claude):
    claude.script(Script(tools=[Search("postgres 18", results=[(PAGE, "PostgreSQL 18")])], preface="Let me look.",
                         stop_reason="pause_turn", redacted=True),
                  Script(tools=[Search("postgres 18 io", results=[(PAGE, "PostgreSQL 18")])], stop_reason="pause_turn"),
                  Script(text="Version 18 adds async I/O."))
    bot.say("UALICE01", "what's new in postgres?", mention=True)
    wait_until(lambda: len(claude.requests) == 3)
    bot.settled()
    paused = [b for b in claude.answers[0] if b["type"] in ("thinking", "redacted_thinking")]
    again = [b for b in claude.answers[1] if b["type"] in ("thinking", "redacted_thinking")]
    assert [b["type"] for b in paused] == ["thinking", "redacted_thinking"] and again
    for continuation, expected in ((claude.requests[1], paused), (claude.requests[2], paused + again)):
        last = continuation["messages"][-1]
        assert last["role"] == "assistant"
        handed_back = [b for b in last["content"] if b["type"] in ("thinking", "redacted_thinking")]
        assert [json.dumps(b, sort_keys=True) for b in handed_back] == [json.dumps(b, sort_keys=True) for b in expected]
    [answer] = slack.posts(CHANNEL, top_level=True)
    assert answer.shown.startswith("Let me look.Version 18 adds async I/O.")
    bot.say("UALICE01", "thanks", mention=True)
    wait_until(lambda: len(claude.requests) == 4)
    later = json.dumps(claude.requests[3]["messages"])
    assert '"thinking"' not in later and "redacted_thinking" not in later  # earlier turns go back as their text
