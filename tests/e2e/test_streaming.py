"""Answers stream: into fork threads with Slack's streaming methods, at the top level by throttled
chat.update; a thinking reaction while no text is visible; long answers continue in order; refusals
fall back."""
import json

import pytest

from bot.slack.reply import THINKING_DELAY

from ..fakes.anthropic_api import Script
from ..harness import CHANNEL, GENERAL, wait_until

LONG = ("Here is the plan.\n```python\n" + "".join(f"step_{i} = run({i})  # détail\n" for i in range(900))
        + "```\nAnd a closing paragraph.\n")


def open_fork(bot, user="UALICE01"):
    bot.slash("/fork", "--fresh", user=user)
    return bot.fork_root()


def completed(slack, top_level):
    return [m for m in slack.posts(CHANNEL, top_level=top_level) if not m.streaming]


def test_a_fork_reply_streams_to_the_person_whose_turn_it_answers(bot, slack, claude):
    root = open_fork(bot, user="UALICE01")
    claude.script(Script(text="streamed answer in several chunks", chunks=6))
    bot.say("UBOB0001", "question from bob", thread_ts=root)
    wait_until(lambda: slack.calls_to("chat.stopStream"))
    bot.settled()
    [start] = slack.calls_to("chat.startStream")
    assert start["thread_ts"] == root
    assert start["recipient_user_id"] == "UBOB0001" and start["recipient_team_id"] == "T0TEAM001"
    [message] = slack.posts(CHANNEL, top_level=False)
    assert message.shown == "streamed answer in several chunks" and not message.streaming
    assert slack.calls_to("chat.postMessage")[1:] == []  # only the fork root was a plain post


def test_appends_to_a_stream_are_throttled(bot, slack, claude):
    root = open_fork(bot)
    claude.script(Script(text="word " * 40, chunks=20, chunk_delay=0.15))  # ~3 s of streaming
    bot.say("UBOB0001", "go", thread_ts=root)
    wait_until(lambda: slack.calls_to("chat.stopStream"), timeout=15)
    times = [c.at for c in slack.calls if c.method in ("chat.startStream", "chat.appendStream")]
    assert 2 <= len(times) <= 4
    assert all(b - a >= 1.0 for a, b in zip(times, times[1:]))


@pytest.mark.settings(threadfork_stream_updates_per_second=1)
def test_answers_written_at_once_in_a_workspace_are_each_shown_less_often_and_one_alone_as_often_as_ever(
        bot, slack, claude):
    roots = []
    for n in range(3):
        bot.slash("/fork", "--fresh")
        roots.append(bot.fork_root(n + 1))
    claude.default_script = Script(text="word " * 45, chunks=30, chunk_delay=0.15)  # ~4.5 s each
    for root in roots:
        bot.say("UBOB0001", "go", thread_ts=root)
    wait_until(lambda: len(slack.calls_to("chat.stopStream")) == 3, timeout=20)
    # three answers at once at one showing a second between them: each shows its new words every 3 s, its first
    # words at once and its end in full
    for stream in [m for m in slack.posts(CHANNEL, top_level=False) if m.method == "chat.startStream"]:
        shown = [stream.created] + [c.at for c in slack.calls_to("chat.appendStream") if c["ts"] == stream.ts]
        assert all(b - a >= 2.9 for a, b in zip(shown, shown[1:])) and len(shown) <= 2
        assert stream.shown == "word " * 45 and not stream.streaming
    bot.settled()
    # once they ended, one answer alone streams every 1.5 s again
    appends = len(slack.calls_to("chat.appendStream"))
    bot.say("UBOB0001", "again", thread_ts=roots[0])
    wait_until(lambda: len(slack.calls_to("chat.stopStream")) == 4, timeout=20)
    assert len(slack.calls_to("chat.appendStream")) - appends >= 2


def test_in_a_fork_its_agent_session_says_claude_is_at_work_and_no_thinking_reaction_is_added(bot, slack, claude):
    root = open_fork(bot)
    claude.script(Script(text="a slow start then words", chunks=4, chunk_delay=1.0))
    bot.say("UBOB0001", "think about it", thread_ts=root)
    wait_until(lambda: slack.calls_to("chat.stopStream"), timeout=15)
    bot.settled()
    wait_until(lambda: slack.session(CHANNEL, root).status == "active", message="the session back to active")
    order = [c.args.get("status") or c.method for c in slack.calls
             if c.method in ("agents.sessions.setStatus", "chat.startStream", "chat.stopStream")]
    assert order[-3:] == ["processing", "chat.startStream", "chat.stopStream"]  # which says `active` (its default)
    assert not [c for c in slack.calls if c.method.startswith("reactions.")]


def test_the_thinking_reaction_shows_while_claude_is_slow_to_start_and_goes_with_the_first_words(bot, slack, claude):
    # a workspace without assistant:write: no agent sessions, so the reaction says it
    slack.team().scopes = ("app_mentions:read", "chat:write", "commands", "reactions:write", "users:read")
    root = open_fork(bot)
    wait_until(lambda: slack.refusals, message="the refused session call")
    claude.script(Script(text="a slow start then words", chunks=4, chunk_delay=1.0))
    ts = bot.say("UBOB0001", "think about it", thread_ts=root)
    wait_until(lambda: slack.calls_to("chat.stopStream"), timeout=15)
    bot.settled()
    wait_until(lambda: slack.calls_to("reactions.remove"), message="the reaction's removal")  # its own pool
    order = [c.method for c in slack.calls if c.method in
             ("reactions.add", "chat.startStream", "chat.stopStream", "reactions.remove")]
    assert order == ["reactions.add", "chat.startStream", "reactions.remove", "chat.stopStream"]
    assert slack.calls_to("reactions.add")[0].args == {"channel": CHANNEL, "timestamp": ts, "name": "eyes"}
    assert slack.calls_to("reactions.remove")[0].args == {"channel": CHANNEL, "timestamp": ts, "name": "eyes"}


def test_a_fast_answer_gets_no_thinking_reaction(bot, slack, claude):
    root = open_fork(bot)
    bot.say("UBOB0001", "quick one", thread_ts=root)
    wait_until(lambda: slack.calls_to("chat.stopStream"))
    # no signal says "no reaction will come": it would come THINKING_DELAY after the reply began, on a
    # timer of its own, so this absence still needs a quiet window
    bot.quiesce(quiet=THINKING_DELAY)
    assert not [c for c in slack.calls if c.method.startswith("reactions.")]


def test_a_failed_reply_that_showed_no_text_removes_the_thinking_reaction(bot, slack, claude):
    # three refusals with the SDK's retry backoff in between: over a second without text
    claude.script(*[Script(status=529, error_type="overloaded_error")] * 3)
    bot.say("UBOB0001", "are you there?", mention=True)
    wait_until(lambda: [p for p in slack.posts(CHANNEL) if "overloaded" in p.get("text", "")], timeout=15)
    bot.settled()
    wait_until(lambda: slack.calls_to("reactions.remove"), message="the reaction's removal")  # its own pool
    assert [c.method for c in slack.calls if c.method.startswith("reactions.")] == ["reactions.add",
                                                                                   "reactions.remove"]


def test_a_top_level_reply_appears_at_the_first_token_and_updates_about_once_a_second(bot, slack, claude):
    claude.script(Script(text="token " * 60, chunks=30, chunk_delay=0.12))  # ~3.6 s of streaming
    bot.say("UALICE01", "long answer please", mention=True)
    wait_until(lambda: slack.posts(CHANNEL, top_level=True), timeout=15)
    bot.settled()
    [message] = slack.posts(CHANNEL, top_level=True)
    assert message.created - claude.first_delta_at[0] < 1.0
    assert message.shown == "token " * 60
    gaps = [b - a for a, b in zip([message.created] + message.updates, message.updates)]
    assert 2 <= len(message.updates) <= 5 and all(gap >= 0.9 for gap in gaps[:-1])


def test_a_long_top_level_answer_continues_in_further_messages_under_the_update_limit(bot, slack, claude):
    claude.script(Script(text=LONG, chunks=40))
    bot.say("UALICE01", "write a lot", mention=True)
    wait_until(lambda: slack.posts(CHANNEL, top_level=True), timeout=20)
    bot.settled()
    pages = [m.shown for m in slack.posts(CHANNEL, top_level=True)]
    assert len(pages) >= 8
    assert all(len(p.encode()) <= 4000 for p in pages)
    assert all(p.count("```") % 2 == 0 for p in pages)
    body = "".join(p.removeprefix("```python\n").removesuffix("```") for p in pages)
    assert body == LONG


def test_a_long_fork_answer_continues_in_further_streamed_messages(bot, slack, claude):
    root = open_fork(bot)
    claude.script(Script(text=LONG, chunks=40))
    bot.say("UBOB0001", "write a lot", thread_ts=root)
    wait_until(lambda: slack.calls_to("chat.stopStream"), timeout=20)
    bot.settled()
    pages = [m.shown for m in slack.posts(CHANNEL, top_level=False)]
    assert len(pages) >= 3 and all(len(p) <= 12_000 for p in pages)
    assert all(p.count("```") % 2 == 0 for p in pages)
    assert "".join(p.removeprefix("```python\n").removesuffix("```") for p in pages) == LONG
    fork = bot.store.sessions.fork_by_message(GENERAL, root)
    assert all(bot.store.sessions.fork_by_message(GENERAL, m.ts).id == fork.id for m in slack.posts(CHANNEL, top_level=False))


def test_a_refused_stream_still_delivers_the_whole_answer(bot, slack, claude):
    root = open_fork(bot)
    slack.fail("chat.startStream", "not_allowed_token_type")
    claude.script(Script(text="the answer must arrive", chunks=5))
    bot.say("UBOB0001", "hello", thread_ts=root)
    wait_until(lambda: slack.posts(CHANNEL, top_level=False))
    bot.settled()
    [message] = [m for m in slack.posts(CHANNEL, top_level=False)]
    assert message.method == "chat.postMessage" and message.shown == "the answer must arrive"


def test_a_streamed_answers_last_words_ride_on_stop_stream_and_survive_its_refusal(bot, slack, claude):
    root = open_fork(bot)
    claude.script(Script(text="first part, then the final words", chunks=2, chunk_delay=0.8))
    bot.say("UBOB0001", "go", thread_ts=root)
    wait_until(lambda: slack.calls_to("chat.stopStream"), timeout=15)
    bot.settled()
    [stop] = slack.calls_to("chat.stopStream")
    assert "final words" in json.dumps(stop.args.get("chunks"))
    assert not slack.calls_to("chat.appendStream")  # start at the first token, stop with the rest
    [message] = slack.posts(CHANNEL, top_level=False)
    assert message.shown == "first part, then the final words" and not message.streaming

    slack.fail("chat.stopStream", "internal_error")
    claude.script(Script(text="second answer, whose ending must not be lost", chunks=2, chunk_delay=0.8))
    bot.say("UBOB0001", "again", thread_ts=root)
    wait_until(lambda: len(slack.calls_to("chat.stopStream")) == 2, timeout=15)
    bot.settled()
    texts = [m.shown for m in slack.posts(CHANNEL, top_level=False)][1:]
    assert "".join(texts) == "second answer, whose ending must not be lost"


def test_an_overload_in_the_middle_of_a_stream_says_so_and_keeps_the_turn(bot, slack, claude):
    root = open_fork(bot)
    claude.script(Script(text="partial answer that breaks", chunks=5, error_after=2))
    bot.say("UBOB0001", "try me", thread_ts=root)
    wait_until(lambda: slack.posts(CHANNEL, top_level=False))
    bot.settled()
    [message] = slack.posts(CHANNEL, top_level=False)
    assert "kept" in message.shown and not message.streaming
    fork = bot.store.sessions.fork_by_message(GENERAL, root)
    statuses = [(t.role.value, t.status.value) for t in bot.store.turns.turns(fork.id)]
    assert statuses == [("user", "failed"), ("assistant", "aborted")]


def test_an_answer_that_arrives_whole_is_shown_finished_when_its_stop_reason_comes_not_when_the_stream_closes(
        bot, slack, claude):
    claude.script(Script(text="All of it at once.", chunks=1, stop_delay=1.5))
    asked = len(slack.calls)
    bot.say("UALICE01", "a short one", mention=True)
    [post] = wait_until(lambda: slack.posts(CHANNEL, top_level=True), timeout=1.2,
                        message="the answer shown before the stream closed")
    assert 0 not in claude.finished_at  # the fake is still holding the stream open
    buttons = [e.get("action_id") for b in slack.message(post.ts, CHANNEL)["blocks"] for e in b.get("elements", [])
               if isinstance(e, dict)]
    assert "answer_feedback" in buttons and "stop_answer" not in buttons  # finished: no Stop to take away
    assert post.shown == "All of it at once."
    bot.settled()
    assert [c.method for c in slack.calls[asked:] if c.method.startswith("chat.")] == ["chat.postMessage"]
    answer = [t for t in bot.store.turns.turns(bot.store.sessions.parent_id(GENERAL)) if t.role.value == "assistant"]
    assert answer[-1].text == "All of it at once." and answer[-1].slack_ts == post.ts
