"""The parent session: mentions in a channel, every message in a DM, answered once at the top level."""
import pytest

from ..fakes.anthropic_api import request_texts
from ..fakes.slack_api import BOT_ID, BOT_USER_ID, TEAM_ID
from ..harness import CHANNEL, GENERAL, wait_until


def test_a_mention_is_answered_once_at_the_channel_top_level(bot, slack, claude):
    bot.say("UALICE01", "What is 2+2?", mention=True)  # delivered as message and as app_mention
    wait_until(lambda: slack.posts(CHANNEL), message="a reply")
    bot.settled()
    [reply] = slack.posts(CHANNEL)
    assert "thread_ts" not in reply.args and reply.shown == "Answer 1"
    assert len(claude.requests) == 1


def test_the_users_text_reaches_the_model_verbatim_with_the_speakers_name(bot, slack, claude):
    slack.names["UALICE01"] = "alice"
    text = "Ünïcødé & <b>tags</b> `code` — *stars*\n\nsecond paragraph"
    bot.say("UALICE01", text, mention=True)
    wait_until(lambda: claude.requests)
    assert request_texts(claude.requests[0])[-1] == f"[alice <@UALICE01>]\n{text}"


def test_the_model_named_in_settings_is_used_unchanged(bot, claude):
    bot.say("UALICE01", "hi", mention=True)
    wait_until(lambda: claude.requests)
    assert claude.requests[0]["model"] == "claude-sonnet-5-5"


def test_every_message_in_a_dm_is_a_parent_turn(bot, slack, claude):
    bot.say("UALICE01", "no mention needed here", channel="D0DM00001", channel_type="im")
    wait_until(lambda: slack.posts("D0DM00001"))
    bot.settled()
    assert len(claude.requests) == 1 and "thread_ts" not in slack.posts("D0DM00001")[0].args


def test_channel_chatter_without_a_mention_is_ignored(bot, slack, claude):
    bot.say("UALICE01", "just talking among ourselves")
    bot.settled()
    assert claude.requests == [] and slack.posts() == []


def test_the_parent_remembers_earlier_turns_and_tells_people_apart(bot, slack, claude):
    slack.names.update({"UALICE01": "alice", "UBOB0001": "bob"})
    bot.say("UALICE01", "My budget is 10k", mention=True)
    wait_until(lambda: len(slack.posts()) == 1)
    bot.say("UBOB0001", "Mine is 5k", mention=True)
    wait_until(lambda: len(slack.posts()) == 2)
    assert request_texts(claude.requests[1])[1:] == [
        "[alice <@UALICE01>]\nMy budget is 10k", "Answer 1", "[bob <@UBOB0001>]\nMine is 5k"]


def test_bots_edits_and_deletions_never_call_the_model(bot, slack, claude):
    base = {"channel": CHANNEL, "team": TEAM_ID, "channel_type": "channel"}
    ts = bot.new_ts()
    deliveries = [
        {**base, "type": "message", "user": BOT_USER_ID, "bot_id": BOT_ID, "text": f"<@{BOT_USER_ID}> me", "ts": ts},
        {**base, "type": "message", "subtype": "bot_message", "bot_id": "BOTHER01",
         "text": f"<@{BOT_USER_ID}> other bot", "ts": bot.new_ts()},
        {**base, "type": "message", "user": "UOTHERBOT", "bot_id": "BOTHER01",
         "text": f"<@{BOT_USER_ID}> other bot as user", "ts": bot.new_ts()},
        {**base, "type": "message", "subtype": "message_changed", "ts": bot.new_ts(),
         "message": {"type": "message", "user": "UALICE01", "text": f"<@{BOT_USER_ID}> edited", "ts": ts}},
        {**base, "type": "message", "subtype": "message_deleted", "ts": bot.new_ts(), "deleted_ts": ts},
        {"type": "reaction_added", "user": BOT_USER_ID, "reaction": "white_check_mark",
         "item": {"type": "message", "channel": CHANNEL, "ts": ts}, "event_ts": bot.new_ts()},
    ]
    for event in deliveries:
        assert bot.event(event).status == 200
    # the bot's own post re-delivered under a new event id is still ignored
    assert bot.event(deliveries[0]).status == 200
    bot.settled()
    assert claude.requests == [] and slack.posts() == []


def test_a_mention_with_no_words_gets_a_hint_and_no_model_call(bot, slack, claude):
    bot.say("UALICE01", "", mention=True)
    wait_until(lambda: slack.calls_to("chat.postEphemeral"))
    bot.settled()
    assert claude.requests == []
    assert "empty" in slack.calls_to("chat.postEphemeral")[0]["text"]


def test_merge_mentioned_in_a_thread_that_is_not_a_fork_is_told_so(bot, slack, claude):
    root = bot.say("UBOB0001", "an ordinary thread")
    bot.say("UALICE01", "merge", thread_ts=root, mention=True)  # any other mention adopts it (test_adoption.py)
    wait_until(lambda: slack.calls_to("chat.postEphemeral"))
    bot.settled()
    assert claude.requests == [] and slack.posts() == [] and slack.calls_under("conversations.") == []
    [told] = slack.calls_to("chat.postEphemeral")
    assert "isn't a fork, so there is nothing to merge" in told["text"] and told["thread_ts"] == root


def test_model_output_cannot_ping_the_channel(bot, slack, claude):
    from ..fakes.anthropic_api import Script

    claude.script(Script(text="Hey <!channel> and @here, also <!subteam^S1|@devs>"))
    bot.say("UALICE01", "announce it", mention=True)
    [reply] = wait_until(lambda: slack.posts())
    for raw in ("<!channel", "<!here", "<!subteam^", "@here"):
        assert raw not in reply.shown


def test_a_claude_error_is_reported_where_the_reply_would_go_and_the_turn_is_kept(bot, slack, claude):
    from ..fakes.anthropic_api import Script

    claude.script(*[Script(status=529, error_type="overloaded_error")] * 3)
    bot.say("UALICE01", "first question", mention=True)
    [notice] = wait_until(lambda: slack.posts(CHANNEL))
    assert "overloaded" in notice["text"] and "kept" in notice["text"] and "thread_ts" not in notice.args
    bot.say("UALICE01", "second question", mention=True)
    wait_until(lambda: len(slack.posts(CHANNEL)) == 2)
    bot.settled()
    assert request_texts(claude.requests[-1])[1:] == [
        "[person-ce01 <@UALICE01>]\nfirst question", "[person-ce01 <@UALICE01>]\nsecond question"]
    assert slack.posts(CHANNEL)[1].shown.startswith("Answer")


def test_token_usage_of_every_reply_is_stored(bot, slack, claude):
    from ..fakes.anthropic_api import Script

    claude.script(Script(text="ok", usage={"input_tokens": 11, "output_tokens": 7,
                                           "cache_read_input_tokens": 900, "cache_creation_input_tokens": 50}))
    bot.say("UALICE01", "count me", mention=True)
    wait_until(lambda: slack.posts())
    bot.settled()
    parent = bot.store.sessions.parent_id(GENERAL)
    reply = bot.store.turns.turns(parent)[-1]
    assert (reply.usage.input_tokens, reply.usage.output_tokens, reply.usage.cache_read_tokens,
            reply.usage.cache_write_tokens) == (11, 7, 900, 50)


def test_one_channels_content_never_reaches_another_channel_or_a_dm(bot, slack, claude):
    bot.say("UALICE01", "ALPHA-SECRET in channel A", mention=True, channel="C0CHANNELA")
    bot.settled()
    bot.slash("/fork", "ALPHA-FORK topic", channel="C0CHANNELA")
    bot.fork_root(1, channel="C0CHANNELA")
    bot.settled()
    before = len(claude.requests)
    bot.say("UALICE01", "hello B", mention=True, channel="C0CHANNELB")
    bot.settled()
    bot.say("UALICE01", "hello DM", channel="D0DIRECT01", channel_type="im")
    bot.settled()
    bot.slash("/fork", "B fork", channel="C0CHANNELB")
    bot.fork_root(1, channel="C0CHANNELB")
    bot.settled()
    for request in claude.requests[before:]:
        assert "ALPHA" not in str(request["messages"])


def test_a_rate_limited_reply_is_posted_again_from_what_was_generated(bot, slack, claude):
    slack.fail("chat.postMessage", "ratelimited", times=1, status=429, retry_after=1)
    bot.say("UALICE01", "answer me", mention=True)
    [reply] = wait_until(lambda: slack.posts(CHANNEL))
    bot.settled()
    assert reply.shown == "Answer 1" and len(claude.requests) == 1
    attempts = slack.calls_to("chat.postMessage")
    assert len(attempts) == 2 and attempts[1].at - attempts[0].at >= 0.9  # Retry-After honoured


@pytest.mark.parametrize("status, kind, words", [
    (429, "rate_limit_error", "rate limit"), (529, "overloaded_error", "overloaded"),
    (500, "api_error", "server error"),
])
def test_each_kind_of_claude_failure_is_retried_then_explained(bot, slack, claude, status, kind, words):
    from ..fakes.anthropic_api import Script

    claude.script(*[Script(status=status, error_type=kind)] * 3)
    bot.say("UALICE01", "hello", mention=True)
    [notice] = wait_until(lambda: slack.posts(CHANNEL), timeout=20)
    bot.settled()
    assert len(claude.requests) == 3  # the first try and two retries with backoff
    assert words in notice["text"] and "kept" in notice["text"] and "🔁" in notice["text"]
    parent = bot.store.sessions.parent_id(GENERAL)
    assert [(t.role.value, t.status.value) for t in bot.store.turns.turns(parent)] == [("user", "failed"),
                                                                                ("assistant", "aborted")]


@pytest.mark.settings(threadfork_model_timeout="1s")
def test_a_claude_timeout_is_explained_and_the_turn_kept(bot, slack, claude):
    from ..fakes.anthropic_api import Script

    claude.script(*[Script(text="too slow", chunks=2, chunk_delay=3)] * 3)
    bot.say("UALICE01", "hello", mention=True)
    [notice] = wait_until(lambda: slack.posts(CHANNEL), timeout=30)
    assert "in time" in notice["text"] and "kept" in notice["text"]


def test_a_40000_character_message_reaches_the_model_whole(bot, slack, claude):
    text = ("Long paste — ünïcödé 🎉 " * 2000)[:40_000]
    bot.say("UALICE01", text, mention=True)
    wait_until(lambda: claude.requests)
    assert request_texts(claude.requests[0])[-1] == f"[person-ce01 <@UALICE01>]\n{text}"


def test_a_file_only_message_in_a_fork_whose_file_slack_will_not_give_is_explained_and_stores_nothing(
        bot, slack, claude):
    bot.slash("/fork", "--fresh")
    root = bot.fork_root()
    ts = bot.new_ts()
    event = {"type": "message", "subtype": "file_share", "channel": CHANNEL, "user": "UBOB0001", "text": "",
             "ts": ts, "thread_ts": root, "channel_type": "channel", "files": [{"id": "F1", "name": "a.png"}]}
    assert bot.event(event).status == 200
    [notice] = wait_until(lambda: slack.calls_to("chat.postEphemeral"))
    bot.settled()
    # a file without its download URL is asked for once (files.info), Slack does not know it: named privately
    assert "*a.png* (Slack would not let me download it)" in notice["text"] and claude.requests == []
    assert [c["file"] for c in slack.calls_to("files.info")] == ["F1"]
    assert bot.store.turns.turns(bot.store.sessions.fork_by_message(GENERAL, root).id) == []
