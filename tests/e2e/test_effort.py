"""Effort: THREADFORK_EFFORT for every channel that chose none, a channel's own choice in /threadfork, sent as
`output_config.effort` to models that take it; /context shows it beside the spend."""
import pytest

from ..harness import wait_until


@pytest.mark.settings(threadfork_effort="low")
def test_with_threadfork_effort_low_every_model_request_asks_for_low_effort(bot, slack, claude):
    bot.say("UALICE01", "hello", mention=True)
    wait_until(lambda: claude.requests)
    bot.settled()
    bot.slash("/fork", "--inherit pricing ideas")  # a fork's topic is answered at once
    wait_until(lambda: len(claude.requests) == 2)
    bot.settled()
    bot.say("UBOB0001", "and the enterprise tier?", thread_ts=bot.fork_root())
    wait_until(lambda: len(claude.requests) == 3)
    bot.settled()
    assert [r.get("output_config") for r in claude.requests] == [{"effort": "low"}] * 3


def test_by_default_no_effort_is_sent_and_the_api_chooses(bot, slack, claude):
    bot.say("UALICE01", "hello", mention=True)
    wait_until(lambda: claude.requests)
    assert "output_config" not in claude.requests[0]


@pytest.mark.settings(threadfork_effort="high", threadfork_model="claude-haiku-4-5")
def test_a_model_that_takes_no_effort_is_sent_none(bot, slack, claude):
    bot.say("UALICE01", "hello", mention=True)
    wait_until(lambda: claude.requests)
    bot.settled()
    assert "output_config" not in claude.requests[0]


@pytest.mark.settings(threadfork_effort="low")
def test_context_shows_the_effort_beside_the_spend(bot, slack, claude):
    bot.say("UALICE01", "hello", mention=True)
    wait_until(lambda: claude.requests)
    bot.settled()
    before = len(slack.responses)
    bot.slash("/context")
    text = wait_until(lambda: [r for r in slack.responses[before:] if "conversation" in r.get("text", "")])[0]["text"]
    lines = text.splitlines()
    spend = next(i for i, line in enumerate(lines) if line.startswith("*Spend*"))
    assert lines[spend + 1].startswith("*Effort*: low")


@pytest.mark.settings(threadfork_effort="low")
def test_a_channel_chooses_its_effort_in_threadfork_and_its_next_turn_uses_it(bot, slack, claude):
    from .test_channel_settings import admin, ask_parent, element, notices, open_settings

    user = admin(slack)
    modal = open_settings(bot, slack, user)
    assert element(modal, "effort")["initial_option"]["value"] == "low"  # the environment's default, in effect
    reply = bot.submit_view(modal, {"effort": "high"})
    assert reply.status == 200 and not reply.body
    [notice] = wait_until(lambda: notices(slack), message="the settings notice")
    assert "effort → high" in notice["text"]
    assert ask_parent(bot, claude)["output_config"] == {"effort": "high"}
    reply = bot.submit_view(open_settings(bot, slack, user), {"effort": "default"})
    assert "output_config" not in ask_parent(bot, claude)  # the API's own default: nothing sent


def test_a_fork_keeps_its_channels_effort_from_the_fork_point_as_its_other_settings(bot, slack, claude):
    from .test_channel_settings import admin, ask_parent, open_settings

    user = admin(slack)
    bot.submit_view(open_settings(bot, slack, user), {"effort": "high"})
    bot.slash("/fork", "--inherit pricing ideas")  # a fork's topic is answered at once
    wait_until(lambda: len(claude.requests) == 1)
    bot.settled()
    assert claude.requests[0]["output_config"] == {"effort": "high"}
    bot.submit_view(open_settings(bot, slack, user), {"effort": "low"})
    assert ask_parent(bot, claude)["output_config"] == {"effort": "low"}  # the channel: its effort now
    bot.say("UBOB0001", "and the enterprise tier?", thread_ts=bot.fork_root())
    wait_until(lambda: len(claude.requests) == 3)
    bot.settled()
    assert claude.requests[2]["output_config"] == {"effort": "high"}  # the fork: its fork point's (invariant 9)
    bot.slash("/fork", "--fresh later")  # a fork opened now keeps the effort in force now
    wait_until(lambda: len(claude.requests) == 4)
    bot.settled()
    assert claude.requests[3]["output_config"] == {"effort": "low"}
