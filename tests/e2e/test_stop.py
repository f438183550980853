"""Stop, through the fakes: Slack's Stop on a fork's agent session and a top-level answer's Stop button both
close the model stream within a second (the fake Messages API records that nothing more was generated),
end the Slack message with the text so far, keep that text as the answer — marked as stopped by the person,
in the thread and in the next request — and put the session back to `active`. A stop for an answer that
already ended does nothing."""
import time

import pytest

from bot.domain.model import TurnStatus

from ..fakes.anthropic_api import Script, request_texts
from ..harness import CHANNEL, GENERAL, wait_until

SLOW = Script(text=" ".join(f"word{n}" for n in range(120)), chunks=60, chunk_delay=0.1)  # ~6 s


def answer_turn(bot, session_id):
    return [t for t in bot.store.turns.turns(session_id) if t.role.value == "assistant"][-1]


def streaming_in(slack, root):
    return [m for m in slack.posts(CHANNEL, top_level=False) if m.get("thread_ts") == root
            and m.method == "chat.startStream"]


def test_stop_on_a_forks_session_ends_the_answer_within_a_second_and_keeps_what_it_said(bot, slack, claude):
    bot.slash("/fork", "--fresh")
    root = bot.fork_root()
    claude.script(SLOW)
    bot.say("UALICE01", "tell me everything", thread_ts=root)
    wait_until(lambda: slack.session(CHANNEL, root) and slack.session(CHANNEL, root).status == "processing")
    before = len(slack.calls_to("chat.appendStream"))
    wait_until(lambda: len(slack.calls_to("chat.appendStream")) > before, message="words streaming")
    pressed = time.monotonic()  # just after an append: the next is 1.5 s away
    assert bot.press_stop("UBOB0001", root).status == 200
    cancelled = wait_until(lambda: claude.cancelled.get(0), timeout=3, message="the model stream to close")
    assert cancelled.at - pressed < 1.0 and cancelled.deltas < 60  # nothing more was generated
    wait_until(lambda: not bot.busy(), message="the answer to be recorded")
    [stream] = streaming_in(slack, root)
    appends = [c for c in slack.calls_to("chat.appendStream") if c["ts"] == stream.ts]
    assert all(c.at < pressed for c in appends)  # none after the stop
    [stop] = [c for c in slack.calls_to("chat.stopStream") if c["ts"] == stream.ts]
    assert stop.at > pressed and not stream.streaming and "Stopped by" in stream.shown
    fork = bot.store.sessions.fork_by_message(GENERAL, root)
    answer = answer_turn(bot, fork.id)
    assert (answer.status, answer.stopped_by) == (TurnStatus.STOPPED, "UBOB0001")
    assert answer.text and answer.text in SLOW.text and len(answer.text) < len(SLOW.text)
    assert stream.shown.startswith(answer.text)  # what Slack shows is what the history keeps
    wait_until(lambda: slack.session(CHANNEL, root).status == "active", message="the session back to active")
    bot.say("UALICE01", "go on from there", thread_ts=root)
    wait_until(lambda: len(claude.requests) == 2)
    texts = request_texts(claude.requests[1])
    assert f"{answer.text}\n\n[<@UBOB0001> stopped this reply here; it is incomplete.]" in texts
    bot.settled()


def test_the_stop_button_of_a_top_level_answer_stops_it_and_is_gone_from_the_final_message(bot, slack, claude):
    claude.script(SLOW)
    bot.say("UALICE01", "a long answer please", mention=True)
    [post] = wait_until(lambda: slack.posts(CHANNEL, top_level=True), message="the answer posted")
    stop = wait_until(lambda: [e for b in slack.message(post.ts, CHANNEL).get("blocks") or [] if b["type"] == "actions"
                               for e in b["elements"] if e["action_id"] == "stop_answer"], message="its Stop button")
    time.sleep(0.5)
    pressed = time.monotonic()
    assert bot.click("stop_answer", message_ts=post.ts, user="UCAROL01").status == 200
    cancelled = wait_until(lambda: claude.cancelled.get(0), timeout=3, message="the model stream to close")
    assert cancelled.at - pressed < 1.0 and cancelled.deltas < 60
    bot.settled()
    final = slack.message(post.ts, CHANNEL)
    actions = [e.get("action_id") for b in final["blocks"] for e in b.get("elements", []) if isinstance(e, dict)]
    assert "stop_answer" not in actions and "answer_feedback" in actions
    assert "Stopped by" in post.shown
    answer = answer_turn(bot, bot.store.sessions.parent_id(GENERAL))
    assert (answer.status, answer.stopped_by) == (TurnStatus.STOPPED, "UCAROL01")
    assert int(stop[0]["value"]) == answer.id
    assert post.shown.startswith(answer.text) and len(answer.text) < len(SLOW.text)


def test_stopping_an_answer_that_already_ended_does_nothing(bot, slack, claude):
    bot.say("UALICE01", "a short one", mention=True)
    [post] = wait_until(lambda: slack.posts(CHANNEL, top_level=True))
    bot.settled()
    answer = answer_turn(bot, bot.store.sessions.parent_id(GENERAL))
    shown, calls = post.shown, len(slack.calls)
    bot.click("stop_answer", str(answer.id), message_ts=post.ts, user="UCAROL01")  # a stale client's button
    bot.settled()
    assert not [c for c in slack.calls[calls:] if c.method in ("chat.update", "chat.postMessage")]
    bot.slash("/fork", "--fresh")
    root = bot.fork_root()
    bot.say("UALICE01", "quick", thread_ts=root)
    wait_until(lambda: slack.session(CHANNEL, root) and slack.session(CHANNEL, root).statuses[-1:] == ["active"]
               and len(slack.session(CHANNEL, root).statuses) == 3)
    bot.settled()
    calls = len(slack.calls)
    bot.event({"type": "agent_session_stopped", "channel": CHANNEL, "thread_ts": root, "user": "UCAROL01",
               "streaming_message_ts": [], "event_ts": "1.2"})
    bot.settled()
    assert answer_turn(bot, bot.store.sessions.parent_id(GENERAL)) == answer  # complete, nobody's stop
    fork = bot.store.sessions.fork_by_message(GENERAL, root)
    assert answer_turn(bot, fork.id).status is TurnStatus.COMPLETE and claude.cancelled == {}
    assert post.shown == shown and len(claude.requests) == 2
    assert not [c for c in slack.calls[calls:] if c.method in ("chat.update", "chat.stopStream")]


def test_a_stop_button_forged_for_another_channels_answer_stops_nothing(bot, slack, claude):
    claude.script(Script(text="x " * 60, chunks=30, chunk_delay=0.1))
    bot.say("UALICE01", "long", mention=True)
    [post] = wait_until(lambda: slack.posts(CHANNEL, top_level=True))
    reply = wait_until(lambda: [t for t in bot.store.turns.turns(bot.store.sessions.parent_id(GENERAL))
                                if t.status is TurnStatus.STREAMING])
    bot.click("stop_answer", str(reply[0].id), channel="C0OTHER001", message_ts="1.5", user="UMALLORY")
    bot.settled()
    assert claude.cancelled == {} and answer_turn(bot, bot.store.sessions.parent_id(GENERAL)).status is \
        TurnStatus.COMPLETE


@pytest.mark.settings(threadfork_merge_policy="owner")
def test_under_the_owner_policy_only_whoever_asked_may_stop_a_top_level_answer(bot, slack, claude):
    claude.script(SLOW)
    bot.say("UALICE01", "a long answer please", mention=True)
    [post] = wait_until(lambda: slack.posts(CHANNEL, top_level=True), message="the answer posted")
    wait_until(lambda: [e for b in slack.message(post.ts, CHANNEL).get("blocks") or [] if b["type"] == "actions"
                        for e in b["elements"] if e["action_id"] == "stop_answer"], message="its Stop button")
    assert bot.click("stop_answer", message_ts=post.ts, user="UCAROL01").status == 200
    [refusal] = wait_until(lambda: [c for c in slack.calls_to("chat.postEphemeral") if c["user"] == "UCAROL01"]
                           + [r for r in slack.responses if "may stop" in r.get("text", "")],
                           message="Carol told why")
    assert "whoever asked" in (refusal.get("text") or "")
    time.sleep(0.5)
    assert 0 not in claude.cancelled  # the answer goes on
    pressed = time.monotonic()
    bot.click("stop_answer", message_ts=post.ts, user="UALICE01")
    cancelled = wait_until(lambda: claude.cancelled.get(0), timeout=3, message="the model stream to close")
    assert cancelled.at - pressed < 1.0
    bot.settled()
    answer = answer_turn(bot, bot.store.sessions.parent_id(GENERAL))
    assert (answer.status, answer.stopped_by) == (TurnStatus.STOPPED, "UALICE01")


@pytest.mark.settings(threadfork_merge_policy="owner")
def test_under_the_owner_policy_a_forks_answer_is_stopped_by_its_owner_or_asker_only(bot, slack, claude):
    bot.slash("/fork", "--fresh", user="UALICE01")
    root = bot.fork_root()
    claude.script(SLOW)
    bot.say("UDAVE001", "tell me everything", thread_ts=root)
    wait_until(lambda: slack.session(CHANNEL, root) and slack.session(CHANNEL, root).status == "processing")
    assert bot.press_stop("UBOB0001", root).status == 200  # neither the owner nor the asker
    wait_until(lambda: [c for c in slack.calls_to("chat.postEphemeral") if c["user"] == "UBOB0001"],
               message="Bob told why")
    time.sleep(0.5)
    assert 0 not in claude.cancelled
    wait_until(lambda: not bot.busy(), timeout=20, message="the answer to finish")
    fork = bot.store.sessions.fork_by_message(GENERAL, root)
    answer = answer_turn(bot, fork.id)
    assert answer.stopped_by is None and answer.text == SLOW.text
