"""What no database can store never poisons a session: NUL bytes and lone surrogates in people's
text, in a fork topic and in Claude's output are removed or replaced at the edge, on SQLite and
PostgreSQL alike — one answer per message, no loop."""
import json
import urllib.parse

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
