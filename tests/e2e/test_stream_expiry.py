"""Streams Slack ends without a Stop, through the fakes: Slack expires a stream some minutes after
chat.startStream (the fake: `stream_ttl` seconds), and its appends are then refused as not streaming. A fork
answer that outlives its stream goes on in a new message of the same thread — whole, in order, nothing twice —
with its Stop and feedback buttons working there, and the history keeps the whole answer; only a Stop is a
Stop. No message still streaming is ever updated."""
import pytest

from bot.domain.model import TurnStatus

from ..fakes.anthropic_api import Script
from ..harness import CHANNEL, GENERAL, wait_until
from .test_research import PAGE, RESEARCH, researched

EXPIRES = 2.0  # seconds a stream lives in these tests (Slack: about five minutes)
SLOW = Script(text=" ".join(f"word{n}" for n in range(120)), chunks=60, chunk_delay=0.12)  # ~7 s


def thread_messages(slack, root):
    return [m for m in slack.posts(CHANNEL, top_level=False) if m.get("thread_ts") == root]


def answer_turn(bot, root):
    fork = bot.store.sessions.fork_by_message(GENERAL, root)
    return fork, [t for t in bot.store.turns.turns(fork.id) if t.role.value == "assistant"][-1]


def ask_slowly(bot, slack, claude) -> str:
    slack.stream_ttl = EXPIRES
    bot.slash("/fork", "--fresh")
    root = bot.fork_root()
    claude.script(SLOW)
    bot.say("UBOB0001", "tell me everything", thread_ts=root)
    return root


def test_a_fork_answer_that_outlives_its_stream_goes_on_in_a_new_message_of_its_thread(bot, slack, claude):
    root = ask_slowly(bot, slack, claude)
    wait_until(lambda: not bot.busy() and 0 in claude.finished_at, timeout=20, message="the answer recorded")
    bot.settled()
    messages = thread_messages(slack, root)
    assert len([m for m in messages if m.shown.strip()]) >= 2  # at least two messages hold its words
    assert messages[0].expired and all(m.method == "chat.startStream" for m in messages)
    assert messages[1].created - messages[0].created >= EXPIRES  # begun once the first stream had expired
    assert "".join(m.shown for m in messages) == SLOW.text  # whole, in order, nothing twice
    assert not any("Stopped by" in m.shown for m in messages)
    assert not [r for r in slack.refusals if r.error == "streaming_state_conflict"]  # no update of a stream
    assert not [c for c in slack.calls_to("chat.update") if c["ts"] == messages[0].ts]  # kept as it showed
    fork, answer = answer_turn(bot, root)
    assert (answer.status, answer.stopped_by, answer.text) == (TurnStatus.COMPLETE, None, SLOW.text)
    assert all(bot.store.sessions.fork_by_message(GENERAL, m.ts).id == fork.id for m in messages)
    actions = [e.get("action_id") for b in slack.message(messages[-1].ts, CHANNEL).get("blocks") or []
               for e in b.get("elements", []) if isinstance(e, dict)]
    assert "answer_feedback" in actions  # under its last message, as under any answer
    wait_until(lambda: slack.session(CHANNEL, root).status == "active", message="the session back to active")


def test_stop_still_stops_an_answer_that_went_on_after_its_stream_expired(bot, slack, claude):
    root = ask_slowly(bot, slack, claude)
    wait_until(lambda: len(thread_messages(slack, root)) >= 2, timeout=10, message="the answer's second message")
    assert bot.press_stop("UALICE01", root).status == 200
    wait_until(lambda: claude.cancelled.get(0), timeout=3, message="the model stream to close")
    wait_until(lambda: not bot.busy(), message="the answer to be recorded")
    bot.settled()
    messages = thread_messages(slack, root)
    assert "Stopped by" in messages[-1].shown and not any("Stopped by" in m.shown for m in messages[:-1])
    _, answer = answer_turn(bot, root)
    assert (answer.status, answer.stopped_by) == (TurnStatus.STOPPED, "UALICE01")
    assert len(answer.text) < len(SLOW.text) and "".join(m.shown for m in messages).startswith(answer.text)
    assert not [r for r in slack.refusals if r.error == "streaming_state_conflict"]


@pytest.mark.settings(**RESEARCH)
def test_research_cards_go_on_in_a_new_message_once_the_stream_showing_them_expired(bot, slack, claude):
    bot.slash("/fork", "--fresh databases")
    root = bot.fork_root()
    bot.settled()
    claude.script(researched())
    released = slack.hold("chat.appendStream")  # the first card's completion (the card began the stream)
    bot.say("UBOB0001", "what's new? see https://docs.example.org/notes", thread_ts=root)
    wait_until(lambda: slack.calls_to("chat.appendStream"), message="the first card's completion")
    slack.expire_streams()  # Slack ends the stream before the second card comes
    released.set()
    wait_until(lambda: len(claude.requests) == 2)
    wait_until(lambda: not bot.busy(), timeout=20, message="the answer recorded")
    bot.settled()
    first, *more = thread_messages(slack, root)[1:]  # after the topic's answer
    assert first.expired and more
    assert {(r.method, r.error) for r in slack.refusals} == {("chat.appendStream", "message_not_in_streaming_state")}
    opened = [[c["status"] for c in call.get("chunks") or [] if c.get("type") == "task_update"]
              for call in slack.calls_to("chat.startStream")[1:]]  # the answer's messages (after the topic's)
    assert opened[:2] == [["in_progress"], ["in_progress"]]  # the refused card opened the next message
    assert "".join(m.shown for m in more).endswith(f"1. [PostgreSQL 18 released]({PAGE})")
    assert "Stopped by" not in "".join(m.shown for m in [first, *more])
