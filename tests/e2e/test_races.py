"""Races the hostile probes found (issue 34): a message written in a fork's thread the moment its root appears,
before Slack's answer to the root's chat.postMessage has reached the bot, is a turn of that fork — after its
topic, which was stored (and the fork leased to its opener) before the root was posted."""
import threading

from ..fakes.anthropic_api import request_texts
from ..harness import CHANNEL, GENERAL, wait_until


def test_a_message_in_a_forks_thread_before_the_bot_has_its_roots_ts_is_a_turn_of_that_fork(any_bot, slack, claude):
    bot = any_bot
    for number in range(1, 6):  # 5 of 5 tries
        topic, early = f"race {number}", f"first words in fork {number}"
        released = slack.hold("chat.postMessage")
        bot.slash("/fork", f"--fresh {topic}")
        root = wait_until(lambda: [p for p in slack.posts(CHANNEL, top_level=True) if f"Fork #{number}" in str(
            p.args.get("blocks"))], message="the root shown")[0]
        bot.say("UBOB0001", early, thread_ts=root.ts)  # Slack shows the root: people answer
        threading.Timer(0.3, released.set).start()  # Slack's answer to the root's post arrives 300 ms late
        asked = wait_until(lambda: [r for r in claude.requests if any(t.endswith(early) for t in request_texts(r))],
                           timeout=30, message=f"the message in fork #{number} asked")
        bot.settled(timeout=30)
        fork = bot.store.sessions.fork_by_number(GENERAL, number)
        turns = bot.store.turns.turns(fork.id)
        users = [t for t in turns if t.role.value == "user"]
        # the fork's topic is its first turn, the early message its second, each answered once
        assert [t.text for t in users] == [topic, early]
        assert users[1].slack_ts and all(t.status.value == "answered" for t in users)
        # in the fork's own session, after its topic: with it in one request, or in the next one
        fork_requests = [r for r in claude.requests if topic in "\n".join(request_texts(r))]
        assert len(asked) == 1 and asked[0] is fork_requests[-1] and 1 <= len(fork_requests) <= 2
        said = "\n".join(request_texts(asked[0]))
        assert said.index(topic) < said.index(early)
        assert not any(early in "\n".join(request_texts(r)) for r in fork_requests[:-1])  # not asked before the topic
        assert len([t for t in turns if t.role.value == "assistant"]) == len(fork_requests)
        assert not [p for p in slack.calls_to("chat.postEphemeral") if "isn't a fork" in p.get("text", "")]
