"""Races the hostile probes found (issue 34): a message written in a fork's thread the moment its root appears,
before Slack's answer to the root's chat.postMessage has reached the bot, is a turn of that fork."""
import threading

import pytest

from ..fakes.anthropic_api import request_texts
from ..harness import CHANNEL, GENERAL, wait_until


@pytest.mark.xfail(strict=False, reason="issue 34, open: under parallel load the early message is sometimes answered "
                   "before its fork's topic is stored, or not within 30 s; it passes alone")
def test_a_message_in_a_forks_thread_before_the_bot_has_its_roots_ts_is_a_turn_of_that_fork(any_bot, slack, claude):
    bot = any_bot
    for number in range(1, 6):  # 5 of 5 tries
        released = slack.hold("chat.postMessage")
        bot.slash("/fork", f"--fresh race {number}")
        root = wait_until(lambda: [p for p in slack.posts(CHANNEL, top_level=True) if f"Fork #{number}" in str(
            p.args.get("blocks"))], message="the root shown")[0]
        bot.say("UBOB0001", f"first words in fork {number}", thread_ts=root.ts)  # Slack shows the root: people answer
        threading.Timer(0.3, released.set).start()  # Slack's answer to the root's post arrives 300 ms late
        asked = wait_until(lambda: [r for r in claude.requests
                                    if any(t.endswith(f"first words in fork {number}") for t in request_texts(r))],
                           timeout=30, message=f"the message in fork #{number} asked")
        bot.settled(timeout=30)
        assert f"race {number}" in "\n".join(request_texts(asked[0]))  # in the fork's own session (its topic)
        fork = bot.store.sessions.fork_by_number(GENERAL, number)
        turns = bot.store.turns.turns(fork.id)
        said = [t for t in turns if t.text.endswith(f"first words in fork {number}")]
        assert len(said) == 1 and said[0].slack_ts and said[0].status.value == "answered"
        # answered once: with the topic, or alone before or after it (then the later request holds it as history)
        fork_requests = [r for r in claude.requests if f"race {number}" in "\n".join(request_texts(r))]
        assert len(asked) <= len(fork_requests) <= 2
        assert len([t for t in turns if t.role.value == "assistant"]) == len(fork_requests)
        assert not [p for p in slack.calls_to("chat.postEphemeral") if "isn't a fork" in p.get("text", "")]
