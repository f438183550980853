"""What no database can store never poisons a session: NUL bytes and lone surrogates in people's
text, in a fork topic and in Claude's output are removed or replaced at the edge, on SQLite and
PostgreSQL alike — one answer per message, no loop."""
import json
import logging
import urllib.parse

import pytest

from bot.domain.model import ForkStatus

from ..fakes.anthropic_api import Script, request_texts
from ..harness import CHANNEL, GENERAL, sign, wait_until


def test_nul_bytes_in_a_message_a_topic_and_the_models_answer_are_dropped_and_answered_once(any_bot, slack,
                                                                                             claude):
    bot = any_bot
    claude.script(Script(text="ans\x00wer\x00 one"))
    bot.say("UALICE01", "hello\x00 there \ud800", mention=True)  # JSON carries a lone surrogate as \ud800
    wait_until(lambda: slack.posts(CHANNEL))
    bot.slash("/fork", "to\x00pic\x00 with a NUL")
    bot.fork_root()
    bot.settled()
    parent = bot.store.sessions.parent_id(GENERAL)
    assert [t.text for t in bot.store.turns.turns(parent)] == ["hello there \ufffd", "answer one"]
    fork = bot.store.sessions.fork_by_number(GENERAL, 1)
    assert fork.topic == "topic with a NUL"
    assert len(claude.requests) == 2  # one per turn: no re-answering loop
    assert any(t.endswith("\ntopic with a NUL") for t in request_texts(claude.requests[-1]))
    assert "\\u0000" not in json.dumps(claude.requests) and "\\ud800" not in json.dumps(claude.requests)


def test_a_signed_slash_command_replayed_byte_for_byte_does_nothing_the_second_time(bot, slack, claude):
    form = {"token": "legacy", "team_id": "T0TEAM001", "channel_id": CHANNEL, "user_id": "UALICE01",
            "command": "/fork", "text": "--fresh replayed", "api_app_id": "A0THREADFORK",
            "response_url": slack.response_url("replay"), "trigger_id": "4242.trigger"}
    body = urllib.parse.urlencode(form).encode()
    headers = sign(body)  # the very bytes and headers an eavesdropper captured
    for _ in range(2):
        assert bot.post(body, "application/x-www-form-urlencoded", headers=headers, signed=False).status == 200
    bot.fork_root()
    bot.settled()
    assert [f.number for f in bot.store.sessions.forks_in(GENERAL, ForkStatus.OPEN)] == [1]
    assert len([p for p in slack.posts(CHANNEL, top_level=True) if p.get("text", "").startswith("Fork #")]) == 1


BAD_NUMBERS = ["3000000000", "1000000000000000000000000000000", "#99999999999999999999"]


@pytest.mark.parametrize("number", BAD_NUMBERS)
def test_merge_with_a_number_no_fork_can_have_gets_a_private_answer_and_no_error(any_bot, slack, number, caplog):
    caplog.set_level(logging.INFO)
    reply = any_bot.slash("/merge", f"{number} please")
    assert reply.status == 200
    [answer] = wait_until(lambda: slack.responses, message="the private answer")
    assert answer.get("response_type", "ephemeral") == "ephemeral"
    assert "There is no fork #" in answer["text"] and number.lstrip("#")[:10] in answer["text"]
    any_bot.settled()
    assert not [r.getMessage()[:120] for r in caplog.records if r.levelno >= logging.ERROR]


@pytest.mark.parametrize("action, value", [("fork_merge", "99999999999999999999"), ("fork_abandon", "-1"),
                                           ("fork_merge", "3000000000"), ("stop_answer", "99999999999999999999"),
                                           ("draft_merge", "99999999999999999999:1"),
                                           ("draft_redraft", "1:3000000000")])
def test_a_button_value_out_of_range_is_ignored_with_a_warning_and_no_error(any_bot, slack, action, value, caplog):
    caplog.set_level(logging.INFO)
    reply = any_bot.click(action, value)
    assert reply.status == 200
    any_bot.settled()
    assert not [r.getMessage()[:120] for r in caplog.records if r.levelno >= logging.ERROR]


@pytest.mark.parametrize("event", [
    {"type": "agent_session_stopped", "channel": 12345, "thread_ts": "1.0", "user": "UALICE01"},
    {"type": "agent_session_stopped", "channel": "C0GENERAL\x00", "thread_ts": "1.0", "user": "UALICE01"},
    {"type": "app_context_changed", "user": "UALICE01", "context": {"entities": [
        {"type": "slack#/types/message_context", "value": {"channel_id": ["C1", "C2"], "ts": "1.0"}}]}},
    {"type": "reaction_added", "user": "UALICE01", "reaction": "white_check_mark",
     "item": {"type": "message", "channel": ["C1"], "ts": "1.0"}},
    {"type": "message", "channel": "C0GENERAL1", "user": "UALICE01", "text": "hi", "ts": "1" * 40},
])
def test_an_event_with_an_unexpected_type_is_ignored_with_one_warning(any_bot, slack, claude, event, caplog):
    caplog.set_level(logging.INFO)
    reply = any_bot.event({**event, "event_ts": "1700000000.000200"})
    assert reply.status == 200
    any_bot.settled()
    warnings = [r for r in caplog.records if r.levelno == logging.WARNING and "not as Slack sends it" in r.getMessage()]
    assert len(warnings) == 1
    assert not [r.getMessage()[:120] for r in caplog.records if r.levelno >= logging.ERROR]
    assert claude.requests == []


def test_a_modal_whose_private_metadata_holds_a_nul_or_a_25_digit_fork_is_answered_and_changes_nothing(
        any_bot, slack, caplog):
    caplog.set_level(logging.INFO)
    from bot.slack.drafts import REDRAFT_VIEW
    for metadata in ('{"channel": "C0GENERAL1\\u0000"}', '{"fork": 1234567890123456789012345, "draft": 1, '
                                                         '"channel": "C0GENERAL1"}'):
        for callback in ("threadfork_settings", REDRAFT_VIEW):
            body = {"type": "view_submission", "team": {"id": "T0TEAM001"}, "user": {"id": "UALICE01"},
                    "api_app_id": "A0THREADFORK", "trigger_id": "1.2.3",
                    "view": {"id": "V1", "callback_id": callback, "private_metadata": metadata, "state": {"values": {}},
                             "type": "modal", "blocks": []}}
            reply = any_bot.post(urllib.parse.urlencode({"payload": json.dumps(body)}).encode(),
                                 "application/x-www-form-urlencoded")
            assert reply.status == 200, (callback, metadata, reply.status)
    any_bot.settled()
    assert not [r.getMessage()[:120] for r in caplog.records if r.levelno >= logging.ERROR]


def test_a_redraft_guidance_over_its_length_is_refused_on_its_field(any_bot, slack):
    from bot.slack.drafts import GUIDANCE, GUIDANCE_LIMIT, REDRAFT_VIEW
    state = {"values": {GUIDANCE: {"text": {"type": "plain_text_input", "value": "x" * (GUIDANCE_LIMIT + 1)}}}}
    body = {"type": "view_submission", "team": {"id": "T0TEAM001"}, "user": {"id": "UALICE01"},
            "api_app_id": "A0THREADFORK", "trigger_id": "1.2.3",
            "view": {"id": "V1", "callback_id": REDRAFT_VIEW, "state": state, "type": "modal", "blocks": [],
                     "private_metadata": json.dumps({"fork": 1, "draft": 1, "channel": CHANNEL})}}
    reply = any_bot.post(urllib.parse.urlencode({"payload": json.dumps(body)}).encode(),
                         "application/x-www-form-urlencoded")
    assert reply.status == 200 and "2,000 characters" in reply.json()["errors"][GUIDANCE]
