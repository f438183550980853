"""The fake Slack's agent platform is as strict as docs.slack.dev says Slack is: sessions created once with
their title and initiator, four statuses (a stream's chat.stopStream sets one too, `active` unless it
names another), renames of 1–200 characters, `missing_scope` without assistant:write, suggested prompts without thread_ts, Stop only while processing; and channels whose
members conversations.info and conversations.members tell, paged, private ones hidden from outsiders."""
import pytest

from tests.fakes.slack_api import BOT_USER_ID

from .fake_slack_helpers import ScriptedApp, client, refusal, strict_fake


@pytest.fixture
def slack():
    yield from strict_fake()


def thread(slack, channel="C1"):
    return client(slack).chat_postMessage(channel=channel, text="a fork root")["ts"]


def test_a_session_is_created_once_with_its_title_and_initiator_and_then_only_changes_status(slack):
    ts = thread(slack)
    web = client(slack)
    first = web.agents_sessions_setStatus(channel_id="C1", thread_ts=ts, status="active", title="#1 pricing",
                                          initiator_user_id="UALICE01")
    assert (first["status"], first["title"]) == ("active", "#1 pricing")
    web.agents_sessions_setStatus(channel_id="C1", thread_ts=ts, status="processing", title="ignored")
    session = slack.session("C1", ts)
    assert (session.title, session.initiator, session.statuses) == ("#1 pricing", "UALICE01", ["active", "processing"])
    web.agents_sessions_rename(channel_id="C1", thread_ts=ts, title="#1 pricing for schools")
    assert slack.session("C1", ts).titles == ["#1 pricing", "#1 pricing for schools"]


@pytest.mark.parametrize("arguments, why", [
    (dict(status="busy"), "status 'busy'"),
    (dict(status="active", title="x" * 201), "1–200 characters"),
    (dict(status="active", thread_ts=None), "channel_id and thread_ts"),
])
def test_a_status_call_slack_would_refuse_is_refused_and_counted_as_a_bug(slack, arguments, why):
    ts = thread(slack)
    call = {"channel_id": "C1", "thread_ts": ts, **arguments}
    assert refusal(lambda: client(slack).agents_sessions_setStatus(**call)) == "invalid_arguments"
    assert len(slack.violations) == 1 and why in slack.violations[0]
    slack.violations.clear()


def test_a_stream_stopped_in_a_sessions_thread_moves_it_to_active_or_to_the_status_it_names(slack):
    ts = thread(slack)
    web = client(slack)
    web.agents_sessions_setStatus(channel_id="C1", thread_ts=ts, status="processing")
    streams = [web.chat_startStream(channel="C1", thread_ts=ts, markdown_text=f"page {n}")["ts"] for n in range(2)]
    web.chat_stopStream(channel="C1", ts=streams[0], session_status="processing")
    web.chat_stopStream(channel="C1", ts=streams[1])  # Slack's default: active
    assert slack.session("C1", ts).statuses == ["processing", "processing", "active"]
    elsewhere = thread(slack)  # a thread with no session: a stream's end creates none
    web.chat_stopStream(channel="C1", ts=web.chat_startStream(channel="C1", thread_ts=elsewhere,
                                                              markdown_text="hi")["ts"])
    assert slack.session("C1", elsewhere) is None


def test_a_stream_stopped_with_a_status_slack_does_not_know_is_refused_and_stays_streaming(slack):
    ts = thread(slack)
    web = client(slack)
    stream = web.chat_startStream(channel="C1", thread_ts=ts, markdown_text="words")["ts"]
    assert refusal(lambda: web.chat_stopStream(channel="C1", ts=stream, session_status="done")) == "invalid_arguments"
    assert len(slack.violations) == 1 and "session_status" in slack.violations[0]
    slack.violations.clear()
    web.chat_appendStream(channel="C1", ts=stream, markdown_text=" more")  # still streaming


def test_a_session_of_a_thread_that_does_not_exist_or_a_rename_without_one_is_refused(slack):
    web = client(slack)
    assert refusal(lambda: web.agents_sessions_setStatus(channel_id="C1", thread_ts="1.000001",
                                                         status="active")) == "invalid_thread_ts"
    ts = thread(slack)
    assert refusal(lambda: web.agents_sessions_rename(channel_id="C1", thread_ts=ts, title="t")) == "session_not_found"
    assert slack.violations == []  # Slack's answers to well-formed calls, not bugs


def test_a_workspace_without_assistant_write_gets_missing_scope_for_every_agent_call(slack):
    team = slack.add_team(scopes=["chat:write", "commands"])
    web = client(slack, team.bot_token)
    ts = web.chat_postMessage(channel="C1", text="root")["ts"]
    for call in (lambda: web.agents_sessions_setStatus(channel_id="C1", thread_ts=ts, status="active"),
                 lambda: web.agents_sessions_rename(channel_id="C1", thread_ts=ts, title="t"),
                 lambda: web.assistant_threads_setSuggestedPrompts(channel_id="D1", prompts=[
                     {"title": "a", "message": "b"}])):
        assert refusal(call) == "missing_scope"
    assert slack.session("C1", ts, team) is None and slack.suggested(team) == []
    assert {r.error for r in slack.refusals} == {"missing_scope"} and slack.violations == []


def test_suggested_prompts_take_one_to_four_prompts_and_no_thread_ts(slack):
    web = client(slack)
    web.assistant_threads_setSuggestedPrompts(channel_id="D1", title="Try", prompts=[
        {"title": "Explore #general privately", "message": "Let's explore it"}])
    [made] = slack.suggested()
    assert (made.channel, made.title, made.prompts[0]["title"]) == ("D1", "Try", "Explore #general privately")
    too_many = [{"title": f"t{n}", "message": "m"} for n in range(5)]
    assert refusal(lambda: web.assistant_threads_setSuggestedPrompts(channel_id="D1", prompts=too_many)) == \
        "invalid_arguments"
    web.assistant_threads_setSuggestedPrompts(channel_id="D1", thread_ts="1.1", prompts=[{"title": "a", "message": "b"}])
    assert len(slack.suggested()) == 1  # it failed silently, as for an agent app
    assert len(slack.violations) == 2
    slack.violations.clear()


def test_stop_is_pressed_only_on_a_processing_session_and_stops_its_streams(slack):
    web = client(slack)
    root = thread(slack)
    streamed = web.chat_startStream(channel="C1", thread_ts=root, recipient_team_id="T0TEAM001",
                                    recipient_user_id="UALICE01", markdown_text="half an")["ts"]
    web.agents_sessions_setStatus(channel_id="C1", thread_ts=root, status="active", title="t")
    app = ScriptedApp(slack)
    with pytest.raises(AssertionError, match="no Stop button"):
        app.press_stop("UALICE01", root, channel="C1")
    web.agents_sessions_setStatus(channel_id="C1", thread_ts=root, status="processing")
    app.press_stop("UALICE01", root, channel="C1")
    event = app.received[-1]["event"]
    assert (event["type"], event["channel"], event["thread_ts"], event["user"], event["streaming_message_ts"]) == (
        "agent_session_stopped", "C1", root, "UALICE01", [streamed])
    assert refusal(lambda: web.chat_appendStream(channel="C1", ts=streamed, markdown_text=" answer")) == \
        "stopped_by_user"  # chat.appendStream's documented error after a Stop
    web.chat_stopStream(channel="C1", ts=streamed, markdown_text=" answer")  # the app's last words
    assert slack.messages[streamed].shown == "half an answer"
    assert refusal(lambda: web.chat_stopStream(channel="C1", ts=streamed)) == "message_not_in_streaming_state"


def test_conversations_info_and_members_say_who_is_in_a_channel_page_by_page(slack):
    slack.add_room("C1", "general", [f"U{n:04d}" for n in range(250)])
    web = client(slack)
    info = web.conversations_info(channel="C1")["channel"]
    assert (info["name"], info["is_member"], info["is_private"]) == ("general", True, False)
    members, cursor = [], None
    while True:
        page = web.conversations_members(channel="C1", limit=100, cursor=cursor)
        members += page["members"]
        cursor = page["response_metadata"]["next_cursor"]
        if not cursor:
            break
    assert len(members) == 251 and members[-1] == BOT_USER_ID
    assert refusal(lambda: web.conversations_members(channel="C1", cursor="bm9wZQ==")) == "invalid_cursor"


def test_a_channel_the_bot_is_not_in_shows_so_and_a_private_one_is_hidden(slack):
    slack.add_room("C2", "random", ["UALICE01"], bot=False)
    slack.add_room("G3", "secret", ["UALICE01"], bot=False, private=True)
    web = client(slack)
    assert web.conversations_info(channel="C2")["channel"]["is_member"] is False
    assert web.conversations_members(channel="C2")["members"] == ["UALICE01"]
    assert refusal(lambda: web.conversations_info(channel="G3")) == "channel_not_found"
    assert refusal(lambda: web.conversations_members(channel="G3")) == "channel_not_found"
    assert refusal(lambda: web.conversations_info(channel="C404")) == "channel_not_found"


def test_reading_channels_needs_the_read_scope_of_their_kind(slack):
    team = slack.add_team(scopes=["channels:read"])
    slack.add_room("C1", "general", ["UALICE01"], team=team)
    slack.add_room("G1", "secret", ["UALICE01"], private=True, team=team)
    web = client(slack, team.bot_token)
    assert web.conversations_info(channel="C1")["ok"]
    assert refusal(lambda: web.conversations_info(channel="G1")) == "missing_scope"


def test_a_channel_not_declared_has_as_members_whoever_wrote_there(slack):
    app = ScriptedApp(slack)
    app.say("UALICE01", "hello there", channel="C5")
    client(slack).chat_postMessage(channel="C5", text="the bot's answer")
    info = client(slack).conversations_info(channel="C5")["channel"]
    assert (info["name"], info["is_member"]) == ("c5", True)
    assert client(slack).conversations_members(channel="C5")["members"] == ["UALICE01", BOT_USER_ID]
    app.say("UBOB0001", "only people here", channel="C6")
    assert client(slack).conversations_info(channel="C6")["channel"]["is_member"] is False
