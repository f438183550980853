"""The fake Slack's streams are as strict as docs.slack.dev's chat.startStream / appendStream / stopStream pages
and Slack's behaviour say: a stream expires `stream_ttl` seconds after chat.startStream (then keeps what it
shows and takes no more appends or stops), appends after a Stop answer `stopped_by_user`, a message still
streaming takes no chat.update (`streaming_state_conflict`), the content arguments are refused as Slack refuses
them; where the agent feature is off, session calls answer `feature_disabled` and suggested prompts
`not_agent_app`; app_context_changed comes in its documented shape."""
import time

import pytest

from tests.fakes import slack_payloads as payloads
from tests.fakes.slack_chat import STREAM_TTL

from .fake_slack_helpers import ScriptedApp, client, refusal, strict_fake


@pytest.fixture
def slack():
    yield from strict_fake()


def stream(slack, text="half an", channel="C1"):
    web = client(slack)
    root = web.chat_postMessage(channel=channel, text="a fork root")["ts"]
    return web, root, web.chat_startStream(channel=channel, thread_ts=root, recipient_team_id="T0TEAM001",
                                           recipient_user_id="UALICE01", markdown_text=text)["ts"]


def test_a_stream_lives_five_minutes_unless_a_test_says_otherwise(slack):
    assert slack.stream_ttl == STREAM_TTL == 300
    slack.stream_ttl = 0.5
    web, _, ts = stream(slack)
    web.chat_appendStream(channel="C1", ts=ts, markdown_text=" answer")  # within its time
    time.sleep(0.6)
    assert refusal(lambda: web.chat_appendStream(channel="C1", ts=ts, markdown_text=" more")) == \
        "message_not_in_streaming_state"
    assert refusal(lambda: web.chat_stopStream(channel="C1", ts=ts, markdown_text=" end")) == \
        "message_not_in_streaming_state"
    message = slack.messages[ts]
    assert (message.shown, message.streaming, message.expired) == ("half an answer", False, True)  # kept as it was
    web.chat_update(channel="C1", ts=ts, text="rewritten")  # no longer streaming: an update is taken
    assert slack.violations == []  # Slack's answers to well-formed calls


def test_a_stream_that_expires_is_not_streaming_when_read_either(slack):
    slack.stream_ttl = 0.3
    _, _, ts = stream(slack)
    assert slack.posts("C1", top_level=False)[0].streaming
    time.sleep(0.4)
    assert not slack.posts("C1", top_level=False)[0].streaming


def test_a_message_still_streaming_takes_no_update(slack):
    web, _, ts = stream(slack)
    assert refusal(lambda: web.chat_update(channel="C1", ts=ts, text="rewritten")) == "streaming_state_conflict"
    assert slack.messages[ts].shown == "half an" and slack.messages[ts].streaming
    web.chat_stopStream(channel="C1", ts=ts, markdown_text=" answer")
    web.chat_update(channel="C1", ts=ts, text="rewritten")  # stopped: now it may be
    assert slack.messages[ts].shown == "rewritten"


def test_after_a_stop_appends_answer_stopped_by_user_and_one_stop_finishes_it(slack):
    web, root, ts = stream(slack)
    web.agents_sessions_setStatus(channel_id="C1", thread_ts=root, status="processing", title="t")
    ScriptedApp(slack).press_stop("UALICE01", root, channel="C1")
    for _ in range(2):
        assert refusal(lambda: web.chat_appendStream(channel="C1", ts=ts, markdown_text=" more")) == "stopped_by_user"
    web.chat_stopStream(channel="C1", ts=ts, markdown_text=" answer")
    assert refusal(lambda: web.chat_appendStream(channel="C1", ts=ts, markdown_text=" more")) == "stopped_by_user"
    assert slack.messages[ts].shown == "half an answer"


def test_a_stops_blocks_stay_under_the_finished_message(slack):
    web, _, ts = stream(slack)
    buttons = [{"type": "actions", "elements": [{"type": "button", "action_id": "b", "text": {
        "type": "plain_text", "text": "Good"}}]}]
    web.chat_stopStream(channel="C1", ts=ts, chunks=[{"type": "markdown_text", "text": " answer"}], blocks=buttons)
    assert slack.message(ts, "C1")["blocks"] == buttons and slack.messages[ts].shown == "half an answer"


@pytest.mark.parametrize("method, arguments, error", [
    ("chat_startStream", dict(markdown_text="a", chunks=[{"type": "markdown_text", "text": "b"}]),
     "cannot_provide_both_markdown_text_and_chunks"),
    ("chat_appendStream", dict(markdown_text="a", chunks=[{"type": "markdown_text", "text": "b"}]),
     "cannot_provide_both_markdown_text_and_chunks"),
    ("chat_stopStream", dict(markdown_text="a", chunks=[{"type": "markdown_text", "text": "b"}]),
     "cannot_provide_both_markdown_text_and_chunks"),
    ("chat_appendStream", dict(), "markdown_text_or_chunks_required"),
    ("chat_appendStream", dict(chunks=[]), "markdown_text_or_chunks_required"),
    ("chat_appendStream", dict(chunks=[{"type": "poem", "text": "b"}]), "invalid_chunks"),
    ("chat_appendStream", dict(chunks=[{"type": "markdown_text"}]), "invalid_chunks"),
    ("chat_appendStream", dict(chunks=["words"]), "invalid_chunks"),
    ("chat_appendStream", dict(chunks=[{"type": "task_update", "id": "t1", "title": "Searching"}]), "invalid_chunks"),
    ("chat_appendStream", dict(chunks=[{"type": "task_update", "id": "t1", "title": "Searching", "status": "done"}]),
     "invalid_chunks"),
    ("chat_appendStream", dict(chunks=[{"type": "markdown_text", "text": "x" * 12_001}]), "invalid_chunks"),
    ("chat_appendStream", dict(markdown_text="x" * 12_001), "msg_too_long"),
])
def test_stream_content_slack_would_refuse_is_refused_and_counted_as_a_bug(slack, method, arguments, error):
    web, root, ts = stream(slack)
    where = dict(thread_ts=root, recipient_team_id="T0TEAM001", recipient_user_id="UALICE01") \
        if method == "chat_startStream" else dict(ts=ts)
    assert refusal(lambda: getattr(web, method)(channel="C1", **where, **arguments)) == error
    assert len(slack.violations) == 1
    slack.violations.clear()
    assert slack.messages[ts].shown == "half an" and slack.messages[ts].streaming  # nothing changed


def test_stream_content_slack_takes(slack):
    web, _, ts = stream(slack)
    web.chat_appendStream(channel="C1", ts=ts, chunks=[{"type": "markdown_text", "text": " answer"}, {
        "type": "task_update", "id": "t1", "title": "Searching", "status": "in_progress"}])
    web.chat_appendStream(channel="C1", ts=ts, markdown_text=" " + "x" * 11_999)
    web.chat_stopStream(channel="C1", ts=ts)  # a stop needs no words
    assert slack.messages[ts].shown.startswith("half an answer x") and slack.violations == []


def test_where_the_agent_feature_is_off_sessions_answer_feature_disabled_and_prompts_not_agent_app(slack):
    team = slack.add_team()
    slack.agent_feature_off(team)
    web = client(slack, team.bot_token)
    ts = web.chat_postMessage(channel="C1", text="root")["ts"]
    assert refusal(lambda: web.agents_sessions_setStatus(channel_id="C1", thread_ts=ts, status="active")) == \
        "feature_disabled"
    assert refusal(lambda: web.agents_sessions_rename(channel_id="C1", thread_ts=ts, title="t")) == "feature_disabled"
    assert refusal(lambda: web.assistant_threads_setSuggestedPrompts(channel_id="D1", prompts=[
        {"title": "a", "message": "b"}])) == "not_agent_app"
    assert slack.session("C1", ts, team) is None and slack.suggested(team) == [] and slack.violations == []
    ts = client(slack).chat_postMessage(channel="C1", text="root")["ts"]  # the default team is unaffected
    client(slack).agents_sessions_setStatus(channel_id="C1", thread_ts=ts, status="active")


def test_app_context_changed_names_the_person_only_in_the_envelopes_authorization(slack):
    team = slack.team()
    entities = [payloads.channel_entity("C1", team)]
    event = payloads.app_context_changed(entities, "1.000001")
    assert event == {"type": "app_context_changed", "context": {"entities": entities}, "event_ts": "1.000001"}
    assert payloads.app_context_changed([], "1.000002")["context"] == {}
    [authorization] = payloads.envelope(event, team, "Ev1", person="UALICE01")["authorizations"]
    assert (authorization["user_id"], authorization["is_bot"], authorization["team_id"]) == ("UALICE01", False,
                                                                                             team.id)
    [bots] = payloads.envelope(event, team, "Ev2")["authorizations"]
    assert (bots["user_id"], bots["is_bot"]) == (team.bot_user_id, True)
