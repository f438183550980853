"""`/fork` and fork turns, with the isolation invariants checked on the requests Claude receives."""
import time

import pytest

from bot.domain.model import ForkStatus

from ..fakes.anthropic_api import request_texts
from ..harness import CHANNEL, GENERAL, wait_until


def talk_in_parent(bot, slack, *texts):
    for text in texts:
        before = len(slack.posts(CHANNEL, top_level=True))
        bot.say("UALICE01", text, mention=True)
        wait_until(lambda: len(slack.posts(CHANNEL, top_level=True)) == before + 1, message="parent reply")
        bot.settled()  # the reply is posted at its first token; let it complete


def root_post(slack):
    return next(c for c in slack.posts(CHANNEL, top_level=True) if c.get("text", "").startswith("Fork #"))


def test_fork_is_acknowledged_at_once_and_posts_a_top_level_root(bot, slack, claude):
    talk_in_parent(bot, slack, "we are planning a launch")
    started = time.monotonic()
    assert bot.slash("/fork", "pricing tiers").status == 200
    assert time.monotonic() - started < 3
    root = bot.fork_root()
    post = root_post(slack)
    assert "thread_ts" not in post.args and "reply_broadcast" not in post.args
    shown = str(post["blocks"])
    for expected in ("Fork #1", "pricing tiers", "inherit", "inherited 2 turns", "tokens", "Merge", "Abandon",
                     "/merge 1"):
        assert expected in shown
    assert root


def test_a_topic_is_the_forks_first_turn_and_is_answered_in_the_thread(bot, slack, claude):
    bot.slash("/fork", "compare Postgres and SQLite")
    root = bot.fork_root()
    [answer] = wait_until(lambda: slack.posts(CHANNEL, top_level=False))
    assert answer["thread_ts"] == root
    assert request_texts(claude.requests[0])[-1].endswith("\ncompare Postgres and SQLite")


def test_without_a_topic_nothing_is_asked_until_someone_writes(bot, slack, claude):
    bot.slash("/fork", "--fresh")
    bot.fork_root()
    bot.settled()
    assert claude.requests == []


def test_every_human_message_in_the_thread_is_a_turn_without_a_mention(bot, slack, claude):
    bot.slash("/fork")
    root = bot.fork_root()
    bot.say("UBOB0001", "first thought", thread_ts=root)
    wait_until(lambda: len(slack.posts(CHANNEL, top_level=False)) == 1)
    bot.say("UALICE01", "second thought", thread_ts=root)
    wait_until(lambda: len(slack.posts(CHANNEL, top_level=False)) == 2)
    assert all(p["thread_ts"] == root for p in slack.posts(CHANNEL, top_level=False))
    assert request_texts(claude.requests[-1])[-3:] == [
        "[person-0001 <@UBOB0001>]\nfirst thought", "Answer 1", "[person-ce01 <@UALICE01>]\nsecond thought"]


def test_an_inherited_fork_sees_the_parent_up_to_the_fork_point_and_nothing_after(bot, slack, claude):
    talk_in_parent(bot, slack, "before the fork")
    bot.slash("/fork", "side topic")
    root = bot.fork_root()
    wait_until(lambda: slack.posts(CHANNEL, top_level=False))
    talk_in_parent(bot, slack, "after the fork")
    bot.say("UBOB0001", "in the fork", thread_ts=root)
    wait_until(lambda: len(slack.posts(CHANNEL, top_level=False)) == 2)
    texts = request_texts(claude.requests[-1])
    assert any(t.endswith("\nbefore the fork") for t in texts)
    assert not any("after the fork" in t for t in texts)
    assert any("background from the channel" in t for t in texts)


def test_a_fresh_fork_sees_no_parent_context(bot, slack, claude):
    talk_in_parent(bot, slack, "secret parent context")
    bot.slash("/fork", "--fresh brand new idea")
    bot.fork_root()
    wait_until(lambda: slack.posts(CHANNEL, top_level=False))
    texts = request_texts(claude.requests[-1])
    assert texts[1:] == ["[person-ce01 <@UALICE01>]\nbrand new idea"]
    assert "fresh" in str(root_post(slack)["blocks"])


def test_the_parent_never_sees_a_forks_turns_and_forks_never_see_each_other(bot, slack, claude):
    talk_in_parent(bot, slack, "parent turn")
    bot.slash("/fork", "fork one topic")
    root_one = bot.fork_root(1)
    bot.slash("/fork", "fork two topic")
    root_two = bot.fork_root(2)
    bot.say("UBOB0001", "only in fork one", thread_ts=root_one)
    wait_until(lambda: len(slack.posts(CHANNEL, top_level=False)) == 3)
    bot.say("UBOB0001", "only in fork two", thread_ts=root_two)
    wait_until(lambda: len(slack.posts(CHANNEL, top_level=False)) == 4)
    talk_in_parent(bot, slack, "back in the parent")
    parent_texts = request_texts(claude.requests[-1])
    assert not any("fork one" in t or "fork two" in t or "only in" in t for t in parent_texts)
    fork_two_texts = request_texts(next(r for r in claude.requests if "only in fork two" in str(r)))
    assert not any("fork one" in t or "only in fork one" in t for t in fork_two_texts)


def test_an_inherited_forks_first_request_reuses_the_parents_cached_prefix(bot, slack, claude):
    talk_in_parent(bot, slack, "one", "two")
    bot.slash("/fork", "cache me")
    bot.fork_root()
    wait_until(lambda: len(claude.requests) == 3)
    parent, fork = claude.requests[1], claude.requests[2]
    assert parent["system"] == fork["system"]
    strip = lambda blocks: [{k: v for k, v in b.items() if k != "cache_control"} for b in blocks]
    parent_blocks = [b for m in parent["messages"] for b in m["content"]]
    fork_blocks = [b for m in fork["messages"] for b in m["content"]]
    marked = max(i for i, b in enumerate(parent_blocks) if "cache_control" in b)
    assert strip(fork_blocks[: marked + 1]) == strip(parent_blocks[: marked + 1])
    fork_marks = [i for i, b in enumerate(fork_blocks) if "cache_control" in b]
    assert any(marked <= i <= marked + 20 for i in fork_marks)
    assert sum(1 for b in fork_blocks if "cache_control" in b) + 1 <= 4  # the API allows four


def test_an_unknown_flag_gets_the_usage_in_the_acknowledgement_and_creates_nothing(bot, slack, claude):
    answer = bot.slash("/fork", "--frsh oops").json()
    bot.settled()
    assert answer["response_type"] == "ephemeral" and "--frsh" in answer["text"] and "/merge" in answer["text"]
    assert slack.responses == [] and slack.posts() == [] and claude.requests == []
    assert bot.store.sessions.fork_by_number(GENERAL, 1) is None


def test_fork_help_shows_usage_in_the_acknowledgement_and_opens_nothing(bot, slack, claude):
    answer = bot.slash("/fork", "help").json()
    bot.settled()
    assert answer["response_type"] == "ephemeral" and "/fork [--fresh|--inherit] [topic]" in answer["text"]
    assert slack.responses == [] and slack.posts() == [] and claude.requests == []


@pytest.mark.settings(threadfork_allowed_users="UBOB0001")
def test_fork_help_outside_the_allow_list_says_so_in_the_acknowledgement(bot, slack, claude):
    answer = bot.slash("/fork", "help", user="UALICE01").json()
    assert answer["response_type"] == "ephemeral" and "isn't enabled" in answer["text"]
    assert "/fork [--fresh|--inherit] [topic]" not in answer["text"] and slack.responses == []


def test_fork_help_in_a_channel_turned_off_says_so_in_the_acknowledgement(bot, slack, claude):
    from bot.domain.settings import ChannelSettings

    bot.store.channel_settings.save(GENERAL, ChannelSettings(enabled=False), "UADMIN01")
    answer = bot.slash("/fork", "help").json()
    assert answer["response_type"] == "ephemeral" and "turned off" in answer["text"]
    assert "/fork [--fresh|--inherit] [topic]" not in answer["text"] and slack.responses == []


def test_fork_in_a_channel_the_bot_is_not_in_explains_and_leaves_no_open_fork(bot, slack, claude):
    slack.fail("chat.postMessage", "not_in_channel")
    bot.slash("/fork", "topic")
    [answer] = wait_until(lambda: slack.responses)
    assert "/invite" in answer["text"]
    bot.settled()
    assert bot.store.sessions.forks_in(GENERAL, ForkStatus.OPEN) == [] and claude.requests == []


def test_fork_numbers_count_up_per_channel(bot, slack, claude):
    bot.slash("/fork", "--fresh")
    bot.slash("/fork", "--fresh")
    bot.slash("/fork", "--fresh", channel="C0OTHER001")
    assert bot.fork_root(2) and bot.fork_root(1, channel="C0OTHER001")
