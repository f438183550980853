"""The bot never sends Claude what the Messages API refuses (the fake answers 400 as the API
would and the fixture fails on it): an empty answer does not poison the session, and every kind
of request carries at most four cache breakpoints — exactly where the prompt cache wants them."""
import pytest

from bot.domain.context import EMPTY_ANSWER
from bot.slack.render import EMPTY_SUMMARY

from ..fakes.anthropic_api import Script, is_merge_request, request_texts
from ..fakes.messages_rules import breakpoints
from ..harness import CHANNEL, wait_until


def test_an_empty_answer_is_shown_as_such_and_the_session_goes_on(bot, slack, claude):
    claude.script(Script(text=""), Script(text=" \n"))
    bot.say("UALICE01", "say nothing", mention=True)
    bot.settled()
    bot.say("UALICE01", "say only whitespace", mention=True)
    bot.settled()
    bot.say("UALICE01", "and now?", mention=True)
    wait_until(lambda: len(claude.requests) == 3)
    bot.settled()
    texts = request_texts(claude.requests[-1])
    assert texts.count(EMPTY_ANSWER) == 2 and texts[-1].endswith("\nand now?")
    shown = [p.shown for p in slack.posts(CHANNEL, top_level=True)]
    assert shown == ["_(Claude returned an empty answer.)_"] * 2 + ["Answer 3"]


def test_an_empty_answer_in_a_fork_and_an_empty_summary_leave_fork_and_channel_working(bot, slack, claude):
    claude.script(Script(text=""))
    bot.slash("/fork", "--fresh think quietly")
    root = bot.fork_root()
    bot.settled()
    claude.script(Script(text=""))  # the summary
    bot.react("UCAROL01", root)
    [post] = wait_until(lambda: [p for p in slack.posts(CHANNEL, top_level=True) if "merged fork" in p.get("text", "")])
    assert post["blocks"][1] == {"type": "markdown", "text": EMPTY_SUMMARY}
    assert EMPTY_ANSWER in request_texts(next(r for r in claude.requests if is_merge_request(r)))
    bot.say("UALICE01", "what did the fork find?", mention=True)
    wait_until(lambda: len(claude.requests) == 3)
    bot.settled()
    assert request_texts(claude.requests[-1])[-1].endswith("\nwhat did the fork find?")


@pytest.mark.settings(threadfork_compact_at=5_000)
def test_each_kind_of_request_carries_its_breakpoints_and_never_more_than_four(bot, slack, claude):
    claude.script(Script(text="parent answer", usage={"input_tokens": 100}))
    bot.say("UALICE01", "parent question", mention=True)
    bot.settled()
    bot.slash("/fork", "inherited topic")
    inherited = bot.fork_root(1)
    bot.settled()
    bot.slash("/fork", "--fresh fresh topic")
    bot.fork_root(2)
    bot.settled()
    bot.react("UCAROL01", inherited)
    wait_until(lambda: any(is_merge_request(r) for r in claude.requests))
    bot.settled()
    claude.script(Script(text="big answer", usage={"input_tokens": 6_000}))
    bot.say("UALICE01", "push it over the compaction threshold", mention=True)
    wait_until(lambda: any("[Compaction request]" in request_texts(r)[-1] for r in claude.requests))
    bot.settled()
    kinds = {"parent": claude.requests[0], "inherited fork": claude.requests[1], "fresh fork": claude.requests[2],
             "merge of the inherited fork": claude.requests[3],
             "compaction": next(r for r in claude.requests if "[Compaction request]" in request_texts(r)[-1])}
    assert request_texts(kinds["fresh fork"])[-1].endswith("\nfresh topic")
    assert is_merge_request(kinds["merge of the inherited fork"])
    # system prompt + last block; an inherited fork (and its merge) also marks the end of its parent prefix
    assert {kind: breakpoints(r) for kind, r in kinds.items()} == {
        "parent": 2, "inherited fork": 3, "fresh fork": 2, "merge of the inherited fork": 3, "compaction": 2}
    assert all(breakpoints(r) <= 4 for r in claude.requests)
