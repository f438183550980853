"""Thinking, as the API wants it: Claude Sonnet 5.5 thinks on a request without a `thinking` field; its signed
thinking blocks (and a connector's tool listing) go back byte for byte when a paused answer is continued, and
never into later turns' text. While Claude thinks the person sees it, and Stop works, in a fork and at the top
level alike."""
import json
import time

from bot.domain.model import TurnStatus

from ..fakes.anthropic_api import McpCall, Script, Search
from ..harness import CHANNEL, GENERAL, wait_until

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


@pytest.mark.settings(threadfork_connectors=json.dumps([{"name": "wiki", "url": "https://wiki.example/mcp"}]))
def test_a_paused_answer_with_a_connectors_tool_listing_is_continued_holding_it_byte_for_byte(bot, slack, claude):
    claude.script(Script(mcp=[McpCall("wiki", "search", {"q": "postgres 18"}, "PostgreSQL 18 adds async I/O.")],
                         preface="Let me look.", stop_reason="pause_turn"),
                  Script(text="Version 18 adds async I/O."))
    bot.say("UALICE01", "what's new in postgres?", mention=True)
    wait_until(lambda: len(claude.requests) == 2)
    bot.settled()
    [listing] = [b for b in claude.answers[0] if b["type"] == "mcp_tool_listing"]
    assert listing["mcp_server_name"] == "wiki" and [t["name"] for t in listing["tools"]] == ["search"]
    last = claude.requests[1]["messages"][-1]
    assert last["role"] == "assistant"
    [handed_back] = [b for b in last["content"] if b["type"] == "mcp_tool_listing"]
    assert json.dumps(handed_back) == json.dumps(listing)  # unchanged, its keys in the order they came
    assert not [b for b in claude.answers[1] if b["type"] == "mcp_tool_listing"]  # the API used it, asked no server
    [answer] = slack.posts(CHANNEL, top_level=True)
    assert answer.shown.startswith("Let me look.Version 18 adds async I/O.")
    bot.say("UALICE01", "thanks", mention=True)
    wait_until(lambda: len(claude.requests) == 3)
    assert "mcp_tool_listing" not in json.dumps(claude.requests[2]["messages"])  # earlier turns go back as text


def stop_buttons(slack, ts: str) -> list[dict]:
    return [e for b in slack.message(ts, CHANNEL).get("blocks") or [] if b["type"] == "actions"
            for e in b["elements"] if e["action_id"] == "stop_answer"]


def test_while_claude_thinks_at_the_top_level_the_person_sees_eyes_then_thinking_with_a_stop(bot, slack, claude):
    claude.script(Script(text="Done thinking.", thinking_delay=3.0))
    ts = bot.say("UALICE01", "think hard about this", mention=True)
    wait_until(lambda: slack.calls_to("reactions.add"), timeout=5, message="the thinking indicator")
    assert not slack.posts(CHANNEL, top_level=True)  # nothing written yet: Claude is thinking
    assert slack.calls_to("reactions.add")[0].args == {"channel": CHANNEL, "timestamp": ts, "name": "eyes"}
    [note] = wait_until(lambda: slack.posts(CHANNEL, top_level=True), timeout=5, message="the Thinking… message")
    assert "Thinking…" in note.shown and stop_buttons(slack, note.ts)  # a long think can be stopped
    assert note.created - slack.calls_to("reactions.add")[0].at > 0.5  # after the 👀, not instead of it
    bot.settled()
    [answer] = slack.posts(CHANNEL, top_level=True)  # the same message: the words replaced the note
    assert answer.ts == note.ts and answer.shown == "Done thinking." and not stop_buttons(slack, answer.ts)
    assert len([c for c in slack.calls_to("chat.postMessage") if not c.get("thread_ts")]) == 1
    assert slack.calls_to("reactions.remove")  # gone once the answer is there


def test_a_short_think_posts_no_thinking_message(bot, slack, claude):
    claude.script(Script(text="Quick.", thinking_delay=0.3))
    bot.say("UALICE01", "easy one", mention=True)
    wait_until(lambda: claude.requests)
    bot.settled()
    [answer] = slack.posts(CHANNEL, top_level=True)
    assert answer.shown == "Quick." and not [c for c in slack.calls if "Thinking…" in json.dumps(c.args)]


def test_stop_on_a_top_level_answer_while_claude_thinks_ends_the_call_before_any_word(bot, slack, claude):
    claude.script(Script(text="never shown", thinking_delay=6.0))
    bot.say("UALICE01", "think long", mention=True)
    [note] = wait_until(lambda: slack.posts(CHANNEL, top_level=True), timeout=5, message="the Thinking… message")
    [stop] = wait_until(lambda: stop_buttons(slack, note.ts), message="its Stop button")
    pressed = time.monotonic()
    assert bot.click("stop_answer", message_ts=note.ts, user="UCAROL01").status == 200
    cancelled = wait_until(lambda: claude.cancelled.get(0), timeout=3, message="the model stream to close")
    assert cancelled.deltas == 0 and cancelled.at - pressed < 1.0  # no word of the answer was generated
    wait_until(lambda: not bot.busy(), message="the answer to be recorded")
    bot.settled()
    [answer] = slack.posts(CHANNEL, top_level=True)
    assert answer.ts == note.ts and "Stopped by" in answer.shown and "Thinking…" not in answer.shown
    assert "never shown" not in answer.shown and not stop_buttons(slack, answer.ts)
    [turn] = [t for t in bot.store.turns.turns(bot.store.sessions.parent_id(GENERAL)) if t.role.value == "assistant"]
    assert (turn.status, turn.stopped_by, int(stop["value"])) == (TurnStatus.STOPPED, "UCAROL01", turn.id)


def test_stop_on_a_forks_session_while_claude_thinks_ends_the_call_before_any_word(bot, slack, claude):
    bot.slash("/fork", "--fresh")
    root = bot.fork_root()
    claude.script(Script(text="never shown", thinking_delay=5.0))
    bot.say("UALICE01", "think long", thread_ts=root)
    wait_until(lambda: len(claude.requests) == 1 and slack.session(CHANNEL, root).status == "processing")
    time.sleep(0.5)  # well inside the thinking
    assert bot.press_stop("UBOB0001", root).status == 200
    cancelled = wait_until(lambda: claude.cancelled.get(0), timeout=4, message="the model stream to close")
    assert cancelled.deltas == 0  # no word of the answer was generated
    wait_until(lambda: not bot.busy(), message="the answer to be recorded")
    assert not any("never shown" in m.shown for m in slack.posts(CHANNEL))
    assert any("Stopped by" in m.shown for m in slack.posts(CHANNEL, top_level=False))
