"""Slack failing while an answer is delivered: 5xx, lost connections, refusals and rate limits on
every reply method, in a fork's thread (streamed) and at the channel's top level (posted and
updated). Whatever fails, Claude's finished answer is visible exactly once, whole, in its place,
and is in the session's context exactly once."""

import pytest

from ..fakes.anthropic_api import Script, request_texts
from ..harness import CHANNEL, GENERAL, wait_until

ANSWER = "Alpha bravo charlie delta echo foxtrot golf hotel india juliet kilo lima mike november oscar."
# five chunks half a second apart: startStream at the first, appendStream at the fourth (1.5 s
# later), stopStream with the last words; at the top level a post and an update or two
SCRIPT = Script(text=ANSWER, chunks=5, chunk_delay=0.5)
# every chunk within the first 0.3 s, well inside the stream's 1.5 s between appends: the stream starts with the
# first two and the rest waits for chat.stopStream, however late a loaded machine reads them (with SCRIPT the last
# chunk came 1.5 s after the start, just when an append may go: a late read had the append show it, and a failing
# stopStream then had nothing left to carry)
LAST_WORDS_ON_STOP = Script(text=ANSWER, chunks=4, chunk_delay=0.1)


def open_fork(bot) -> str:
    bot.slash("/fork", "--fresh", user="UALICE01")
    root = bot.fork_root()
    bot.settled()
    return root


def ask(bot, thread_ts: str | None, text: str = "question") -> str:
    return bot.say("UBOB0001", text, thread_ts=thread_ts, mention=thread_ts is None)


def messages_in(slack, thread_ts: str | None) -> list:
    return slack.posts(CHANNEL, top_level=thread_ts is None) if thread_ts is None else [
        m for m in slack.posts(CHANNEL, top_level=False) if m["thread_ts"] == thread_ts]


def visible_text(message) -> str:
    return message.shown or message.get("text") or ""


def assert_shown_once(slack, thread_ts: str | None, answer: str) -> list:
    messages = messages_in(slack, thread_ts)
    assert messages, "the answer is not visible"
    assert "".join(visible_text(m) for m in messages) == answer  # whole, in order, nothing twice
    return messages


def assert_in_context_once(bot, slack, claude, thread_ts: str | None, answer: str) -> None:
    slack.clear_failures()
    before = len(claude.requests)
    ask(bot, thread_ts, "and then?")
    wait_until(lambda: len(claude.requests) > before)
    bot.settled()
    assert sum(text.count(answer) for text in request_texts(claude.requests[before])) == 1


STREAM_FAILURES = [
    # method, how it fails, how many times in a row, how many messages hold the answer
    ("chat.startStream", {"status": 500}, 1, 1),
    ("chat.startStream", {"status": 500}, 2, 1),
    ("chat.startStream", {"status": 503}, 3, 1),  # beyond the retries: posted and updated instead
    ("chat.startStream", {"drop": True}, 1, 1),
    ("chat.appendStream", {"status": 500}, 1, 1),  # never repeated: the message is stopped, then rewritten
    ("chat.appendStream", {"status": 500, "applied": True}, 1, 1),  # Slack appended, then failed
    ("chat.appendStream", {"drop": True, "applied": True}, 1, 1),  # Slack appended, the answer was lost
    ("chat.stopStream", {"status": 500}, 1, 1),
    ("chat.stopStream", {"status": 500}, 2, 1),
    # beyond the retries the stream may still be streaming, and Slack updates no streaming message: it keeps
    # what it shows and the rest follows it
    ("chat.stopStream", {"status": 500}, 3, 2),
    ("chat.stopStream", {"status": 500, "applied": True}, 1, 1),  # stopped, then failed: the retry is refused
    ("chat.stopStream", {"drop": True, "applied": True}, 1, 1),
    # the stream had ended (Slack says so): its message is rewritten whole
    ("chat.stopStream", {"error": "message_not_in_streaming_state", "applied": True}, 1, 1),
]


@pytest.mark.parametrize("method, how, times, count", STREAM_FAILURES,
                         ids=[f"{m}-{'-'.join(f'{k}={v}' for k, v in h.items())}-x{t}"
                              for m, h, t, _ in STREAM_FAILURES])
def test_a_fork_answer_is_shown_once_whole_whatever_a_stream_method_does(bot, slack, claude, method, how, times,
                                                                        count):
    thread_ts = open_fork(bot)
    claude.script(LAST_WORDS_ON_STOP if count == 2 else SCRIPT)
    slack.fail(method, how.get("error", "internal_error"), times=times,
               **{k: v for k, v in how.items() if k != "error"})
    ask(bot, thread_ts)
    wait_until(lambda: slack.calls_to(method), timeout=15, message=f"a call to {method}")
    bot.settled()
    assert len(slack.calls_to(method)) >= times  # every scripted failure was met
    messages = assert_shown_once(slack, thread_ts, ANSWER)
    assert len(messages) == count
    assert not [r for r in slack.refusals if r.error == "streaming_state_conflict"]  # no update of a stream
    fork = bot.store.sessions.fork_by_message(GENERAL, thread_ts)
    for message in messages:  # finish() gave their ts
        assert bot.store.sessions.fork_by_message(GENERAL, message.ts).id == fork.id
    assert_in_context_once(bot, slack, claude, thread_ts, ANSWER)


TOP_LEVEL_FAILURES = [
    ("chat.postMessage", {"status": 500}, 1),
    ("chat.postMessage", {"status": 500}, 2),
    ("chat.postMessage", {"status": 502}, 3),  # beyond the retries: posted at the next flush
    ("chat.postMessage", {"drop": True}, 1),
    ("chat.update", {"status": 500}, 1),
    ("chat.update", {"status": 500}, 2),
    ("chat.update", {"status": 500}, 3),
    ("chat.update", {"status": 500, "applied": True}, 1),
    ("chat.update", {"drop": True, "applied": True}, 2),
]


@pytest.mark.parametrize("method, how, times", TOP_LEVEL_FAILURES,
                         ids=[f"{m}-{'-'.join(f'{k}={v}' for k, v in h.items())}-x{t}"
                              for m, h, t in TOP_LEVEL_FAILURES])
def test_a_top_level_answer_is_shown_once_whole_whatever_posting_or_updating_does(bot, slack, claude, method, how,
                                                                                 times):
    claude.script(SCRIPT)
    slack.fail(method, "internal_error", times=times, **how)
    ask(bot, None)
    wait_until(lambda: slack.calls_to(method), timeout=15, message=f"a call to {method}")
    bot.settled()
    assert len(slack.calls_to(method)) >= times
    assert_shown_once(slack, None, ANSWER)
    assert_in_context_once(bot, slack, claude, None, ANSWER)


def test_a_rate_limited_start_stream_is_not_waited_for_the_answer_is_posted_and_updated_at_once(bot, slack, claude):
    thread_ts = open_fork(bot)
    slack.fail("chat.startStream", "ratelimited", status=429, retry_after=30)
    claude.script(SCRIPT, Script(text="The second answer, also at once.", chunks=3, chunk_delay=0.3))
    ask(bot, thread_ts)
    [message] = wait_until(lambda: messages_in(slack, thread_ts), timeout=5)
    assert message.method == "chat.postMessage"
    assert message.created - claude.first_delta_at[0] < 1.0  # Retry-After (30 s) is not waited out
    bot.settled()
    assert_shown_once(slack, thread_ts, ANSWER)
    assert message.updates  # posted at the first words, then updated like a top-level answer

    ask(bot, thread_ts, "again")  # within Retry-After: no second refusal is asked for
    wait_until(lambda: len(messages_in(slack, thread_ts)) == 2, timeout=5)
    bot.settled()
    assert len(slack.calls_to("chat.startStream")) == 1
    second = messages_in(slack, thread_ts)[1]
    assert visible_text(second) == "The second answer, also at once."
    assert second.method == "chat.postMessage" and second.created - claude.first_delta_at[1] < 1.0


def test_a_stream_whose_message_cannot_be_rewritten_goes_on_after_what_it_shows(bot, slack, claude):
    thread_ts = open_fork(bot)
    claude.script(SCRIPT)
    slack.fail("chat.appendStream", status=500)
    slack.fail("chat.update", status=500, times=3)  # the rewrite of the broken stream, and its retries
    ask(bot, thread_ts)
    wait_until(lambda: slack.calls_to("chat.appendStream"), timeout=15)
    bot.settled()
    streamed, rest = assert_shown_once(slack, thread_ts, ANSWER)
    assert streamed.method == "chat.startStream" and rest.method == "chat.postMessage"
    fork = bot.store.sessions.fork_by_message(GENERAL, thread_ts)
    assert {bot.store.sessions.fork_by_message(GENERAL, m.ts).id for m in (streamed, rest)} == {fork.id}
    assert_in_context_once(bot, slack, claude, thread_ts, ANSWER)


def test_a_stream_that_cannot_start_is_posted_even_when_posting_fails_once(bot, slack, claude):
    thread_ts = open_fork(bot)
    claude.script(SCRIPT)
    slack.fail("chat.startStream", status=500, times=3)
    slack.fail("chat.postMessage", status=500)
    ask(bot, thread_ts)
    wait_until(lambda: messages_in(slack, thread_ts), timeout=15)
    bot.settled()
    [message] = assert_shown_once(slack, thread_ts, ANSWER)
    assert message.method == "chat.postMessage"
    assert_in_context_once(bot, slack, claude, thread_ts, ANSWER)


LONG = ("Here is the plan.\n```python\n" + "".join(f"step_{i} = run({i})  # détail\n" for i in range(900))
        + "```\nAnd a closing paragraph.\n")


def reassembled(messages) -> str:
    return "".join(visible_text(m).removeprefix("```python\n").removesuffix("```") for m in messages)


def test_a_long_fork_answer_whose_first_page_cannot_be_stopped_continues_posted_once(bot, slack, claude):
    thread_ts = open_fork(bot)
    claude.script(Script(text=LONG, chunks=40))
    slack.fail("chat.stopStream", status=500, times=3)  # the first page's stop, with its retries
    ask(bot, thread_ts)
    wait_until(lambda: slack.calls_to("chat.stopStream"), timeout=15)
    bot.settled()
    messages = messages_in(slack, thread_ts)
    streamed, *posted = messages
    assert streamed.method == "chat.startStream" and len(posted) >= 3
    # its stop never landed, so it may still be streaming: Slack updates no such message, it is kept as it is
    assert not [c for c in slack.calls_to("chat.update") if c["ts"] == streamed.ts]
    assert all(m.method == "chat.postMessage" for m in posted)
    assert all(len(visible_text(m).encode()) <= 4000 for m in posted)  # the rest fits chat.update
    assert all(visible_text(m).count("```") % 2 == 0 for m in posted)  # each closes the fence it reopens
    assert reassembled(messages) == LONG
    assert len(slack.calls_to("chat.startStream")) == 1  # nothing streamed after the break
    assert_in_context_once(bot, slack, claude, thread_ts, LONG)


def test_a_long_top_level_answer_survives_failed_posts_and_updates(bot, slack, claude):
    claude.script(Script(text=LONG, chunks=40, chunk_delay=0.05))
    slack.fail("chat.postMessage", status=500, times=3)
    slack.fail("chat.update", status=503, times=3)
    ask(bot, None)
    wait_until(lambda: slack.posts(CHANNEL, top_level=True), timeout=20)
    bot.settled()
    assert len(slack.calls_to("chat.postMessage")) >= 4 and len(slack.calls_to("chat.update")) >= 3
    messages = slack.posts(CHANNEL, top_level=True)
    assert len(messages) >= 8 and all(len(visible_text(m).encode()) <= 4000 for m in messages)
    assert reassembled(messages) == LONG
    assert_in_context_once(bot, slack, claude, None, LONG)


def test_a_private_answer_to_a_slash_command_is_retried_after_a_server_error(bot, slack, claude):
    slack.fail("response_url", status=500)
    bot.slash("/forks")
    [answer] = wait_until(lambda: slack.responses, timeout=10)
    bot.settled()
    assert slack.responses == [answer] and "fork" in answer["text"].lower()
