"""Web research and feedback, end to end: Claude's server tools streamed as the API streams them,
shown as task cards in a fork and as a status line at the top level; sources at the end of the
answer and in the session; 👍/👎 stored once per person; /context counting both."""
import json
import time
import urllib.parse

import pytest

from ..fakes.anthropic_api import Cited, Fetch, Script, Search, request_texts
from ..harness import APP_ID, CHANNEL, GENERAL, wait_until
from ..fakes.slack_api import TEAM_ID

RESEARCH = {"threadfork_tools": "web_search,web_fetch"}
PAGE = "https://example.org/pg18"


def researched() -> Script:
    return Script(tools=[Search("postgres 18 release", results=[(PAGE, "PostgreSQL 18 released")]),
                         Fetch("https://docs.example.org/notes", title="Release notes")],
                  text="Version 18 shipped. ", cited=[Cited("It adds async I/O.", PAGE)], chunk_delay=0.05)


def chunks_of(slack, kind: str) -> list[dict]:
    return [chunk for call in slack.calls if call.method in ("chat.startStream", "chat.appendStream")
            for chunk in call.get("chunks") or [] if chunk.get("type") == kind]


def test_without_threadfork_tools_requests_carry_no_tools_at_all(bot, slack, claude):
    bot.say("UALICE01", "hello", mention=True)
    wait_until(lambda: claude.requests)
    assert claude.tools_sent == [None]


@pytest.mark.settings(**RESEARCH, threadfork_tool_max_uses=3)
def test_in_a_fork_each_search_and_fetch_is_a_task_card_and_the_answer_ends_with_its_sources(bot, slack, claude):
    bot.slash("/fork", "--fresh databases")
    root = bot.fork_root()
    bot.settled()
    claude.script(researched())
    bot.say("UBOB0001", "what's new? see https://docs.example.org/notes", thread_ts=root)
    wait_until(lambda: len(claude.requests) == 2)
    bot.settled()
    assert claude.tools_sent[1] == [{"type": "web_search_20250305", "name": "web_search", "max_uses": 3},
                                    {"type": "web_fetch_20250910", "name": "web_fetch", "max_uses": 3}]
    cards = chunks_of(slack, "task_update")
    search_id = cards[0]["id"]
    assert [(c["id"] == search_id, c["status"]) for c in cards] == [
        (True, "in_progress"), (True, "complete"), (False, "in_progress"), (False, "complete")]
    assert cards[0]["title"] == "Searching the web for “postgres 18 release”"
    assert cards[1]["sources"] == [{"type": "url", "url": PAGE, "text": "PostgreSQL 18 released"}]
    assert cards[2]["title"] == "Reading docs.example.org/notes"
    assert [c.get("task_display_mode") for c in slack.calls_to("chat.startStream")][-1] == "timeline"
    answer = [m for m in slack.posts(CHANNEL, top_level=False) if "Version 18" in m.shown][-1]
    expected = f"Version 18 shipped. It adds async I/O.\n\n**Sources**\n1. [PostgreSQL 18 released]({PAGE})"
    assert answer.shown == expected
    bot.say("UBOB0001", "thanks", thread_ts=root)
    wait_until(lambda: len(claude.requests) == 3)
    assert expected in request_texts(claude.requests[2])  # the session keeps the answer with its sources
    later = json.dumps(claude.requests[2])
    assert "encrypted" not in later and "web_search_tool_result" not in later  # never the raw results


@pytest.mark.settings(**RESEARCH)
def test_at_the_top_level_a_status_line_shows_the_research_until_the_answer_is_written(bot, slack, claude):
    script = researched()
    script.chunk_delay = 0.6  # slow enough that an update shows the research under way
    claude.script(script)
    bot.say("UALICE01", "what's new in postgres? https://docs.example.org/notes", mention=True)
    wait_until(lambda: claude.requests)
    bot.settled()
    shown = [c.get("markdown_text") or "".join(b.get("text", "") for b in c.get("blocks") or [] if b["type"] == "markdown")
             for c in slack.calls if c.method in ("chat.postMessage", "chat.update")]
    assert any("🔎 Searching the web for “postgres 18 release”…" in t or "🔎 Reading docs.example.org/notes…" in t
               for t in shown)
    [answer] = slack.posts(CHANNEL, top_level=True)
    assert "🔎" not in answer.shown and answer.shown.endswith(f"1. [PostgreSQL 18 released]({PAGE})")


@pytest.mark.settings(**RESEARCH)
def test_context_counts_research_and_feedback_pressed_twice_counts_once(bot, slack, claude):
    claude.script(researched())
    bot.say("UALICE01", "research it https://docs.example.org/notes", mention=True)
    wait_until(lambda: claude.requests)
    bot.settled()
    [answer] = slack.posts(CHANNEL, top_level=True)
    [buttons] = [b for b in answer["blocks"] if b["type"] == "context_actions"]
    assert buttons["elements"][0]["type"] == "feedback_buttons"
    for user, value in (("UALICE01", "good"), ("UALICE01", "good"), ("UALICE01", "bad"), ("UBOB0001", "bad")):
        assert press_feedback(bot, slack, user, answer.ts, value).status == 200
    bot.settled()
    bot.slash("/context")
    [report] = wait_until(lambda: slack.responses)
    assert "1 searches · 1 fetches" in report["text"] and "👍 1 · 👎 1" in report["text"]
    assert len(claude.requests) == 1  # feedback calls no model


def press_feedback(bot, slack, user: str, message_ts: str, value: str):
    payload = {
        "type": "block_actions", "user": {"id": user, "username": user.lower(), "team_id": TEAM_ID},
        "api_app_id": APP_ID, "token": "legacy-verification-unused", "trigger_id": f"{time.time()}.trigger",
        "container": {"type": "message", "message_ts": message_ts, "channel_id": CHANNEL, "is_ephemeral": False},
        "team": {"id": TEAM_ID, "domain": "fake"}, "channel": {"id": CHANNEL, "name": "general"},
        "message": {"type": "message", "ts": message_ts},
        "response_url": slack.response_url("feedback"),
        "actions": [{"type": "feedback_buttons", "action_id": "answer_feedback", "block_id": "fb", "value": value,
                     "action_ts": str(time.time())}],
    }
    return bot.post(urllib.parse.urlencode({"payload": json.dumps(payload)}).encode(),
                    "application/x-www-form-urlencoded")


@pytest.mark.settings(**RESEARCH)
def test_a_research_turn_claude_pauses_is_handed_back_and_finished_as_one_answer(bot, slack, claude):
    paused = Script(tools=[Search("postgres 18 release", results=[(PAGE, "PostgreSQL 18 released")])],
                    preface="Let me look. ", stop_reason="pause_turn")
    claude.script(paused, Script(text="Version 18 shipped. It adds async I/O."))  # no citation: the found page
    bot.say("UALICE01", "what's new in postgres?", mention=True)
    wait_until(lambda: len(claude.requests) == 2)
    bot.settled()
    resumed = claude.requests[1]["messages"][-1]
    assert resumed["role"] == "assistant"
    assert [b["type"] for b in resumed["content"]] == ["thinking", "text", "server_tool_use", "web_search_tool_result"]
    [answer] = slack.posts(CHANNEL, top_level=True)
    assert answer.shown == (f"Let me look. Version 18 shipped. It adds async I/O.\n\n**Sources**\n"
                            f"1. [PostgreSQL 18 released]({PAGE})")
    parent = bot.store.sessions.parent_id(GENERAL)
    assert bot.store.turns.turns(parent)[-1].usage.searches == 1 and len(bot.store.turns.turns(parent)) == 2
