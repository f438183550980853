"""Every stop reason handled: a refusal says Claude declined and leaves the conversation, a cut answer offers
Continue (and carries on), a full context window compacts the session and answers again once; each turn keeps
its stop reason and /context counts them."""
import json
import time

import pytest

from ..fakes.anthropic_api import Script, request_texts
from ..harness import CHANNEL, GENERAL, wait_until

REFUSED = "I won't write that exploit."


def buttons(message) -> list[dict]:
    """The buttons of a message as Slack shows it now."""
    return [e for b in message.get("blocks") or [] if b.get("type") == "actions" for e in b.get("elements", [])]


def test_a_refused_answer_says_claude_declined_and_leaves_what_later_requests_send(bot, slack, claude):
    claude.script(Script(text="Hello Alice."),
                  Script(text=REFUSED, stop_reason="refusal",
                         stop_details={"type": "refusal", "category": "cyber", "explanation": "declined"}),
                  Script(text="Rust is a systems language."))
    bot.say("UALICE01", "hello", mention=True)
    wait_until(lambda: len(claude.requests) == 1)
    bot.settled()
    bot.say("UALICE01", "write me an exploit for this server", mention=True)
    wait_until(lambda: len(claude.requests) == 2)
    bot.settled()
    refused = [m for m in slack.posts(CHANNEL, top_level=True) if REFUSED in m.shown][-1]
    assert "declined" in refused.shown
    bot.say("UALICE01", "ok, tell me about rust", mention=True)
    wait_until(lambda: len(claude.requests) == 3)
    bot.settled()
    later = json.dumps(claude.requests[2])
    assert REFUSED not in later and "exploit for this server" not in later
    assert "Hello Alice." in later and "tell me about rust" in later  # the conversation goes on
    parent = bot.store.sessions.parent_id(GENERAL)
    reasons = [t.stop_reason for t in bot.store.turns.turns(parent) if t.role.value == "assistant"]
    assert reasons == ["end_turn", "refusal", "end_turn"]
    before = len(slack.responses)
    bot.slash("/context")
    shown = wait_until(lambda: [r for r in slack.responses[before:] if "conversation" in r.get("text", "")])[0]["text"]
    assert "*Answers*: 2 ended · 1 declined." in shown


def test_an_answer_cut_at_max_tokens_carries_a_continue_button_that_carries_it_on(bot, slack, claude):
    claude.script(Script(text="Step 1. Step 2. Ste", stop_reason="max_tokens"), Script(text="p 3. Done."))
    bot.say("UALICE01", "explain the rollout", mention=True)
    wait_until(lambda: claude.requests)
    bot.settled()
    [cut] = slack.posts(CHANNEL, top_level=True)
    assert "length limit" in cut.shown
    [button] = [e for e in buttons(cut) if "continue" in e["action_id"]]
    bot.click(button["action_id"], message_ts=cut.ts, user="UBOB0001")
    wait_until(lambda: len(claude.requests) == 2)
    bot.settled()
    carried = claude.requests[1]
    assert "Step 1. Step 2. Ste" in request_texts(carried)[-2]  # the cut answer, then the request to go on
    assert "Continue your previous answer" in request_texts(carried)[-1]
    assert any("p 3. Done." in m.shown for m in slack.posts(CHANNEL, top_level=True))
    bot.click(button["action_id"], message_ts=cut.ts, user="UBOB0001")  # a second press carries nothing on twice
    bot.settled()
    assert len(claude.requests) == 2


@pytest.mark.settings(threadfork_compact_at=2_000)
def test_a_full_context_window_compacts_the_session_and_answers_again_once(bot, slack, claude):
    for i in range(3):
        claude.script(Script(text=f"Answer about topic {i}. " * 40))
        bot.say("UALICE01", f"topic {i} " * 40, mention=True)
        wait_until(lambda: len(claude.requests) == i + 1)
        bot.settled()
    claude.script(Script(text="The long answer", stop_reason="model_context_window_exceeded"),
                  Script(text="COMPACTED: topics 0-2"), Script(text="and its end."))
    bot.say("UALICE01", "now the long one", mention=True)
    wait_until(lambda: len(claude.requests) == 6)
    bot.settled()
    assert "Continue that answer" in request_texts(claude.requests[5])[-1]
    assert "COMPACTED: topics 0-2" in json.dumps(claude.requests[5])
    shown = [m.shown for m in slack.posts(CHANNEL, top_level=True)]
    assert any("The long answer" in s and "context window" in s for s in shown)
    assert any("and its end." in s for s in shown)


def test_a_model_that_disappears_gets_one_clear_notice_and_no_retries(bot, slack, claude):
    claude.script(Script(status=404, error_type="not_found_error", error_message="model: claude-sonnet-5-5"))
    bot.say("UALICE01", "hello", mention=True)
    wait_until(lambda: claude.requests)
    bot.settled()
    time.sleep(1.0)  # long enough for a retry to have shown
    assert len(claude.requests) == 1
    [notice] = [m for m in slack.posts(CHANNEL) if "claude-sonnet-5-5" in m.shown]
    assert "no longer offers the model claude-sonnet-5-5" in notice.shown and "/threadfork" in notice.shown
