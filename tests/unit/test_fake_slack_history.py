"""The fake Slack knows the messages that exist in its channels — people's, other apps' and the bot's —
and reads a thread back through conversations.replies in Slack's shapes and pages."""
import pytest

from tests.fakes.slack_api import BOT_ID, BOT_USER_ID, TEAM_ID

from .fake_slack_helpers import ScriptedApp, client, refusal, strict_fake


@pytest.fixture
def slack():
    yield from strict_fake()


CHANNEL = "C0GENERAL01"


def thread(slack, app, replies: int = 3) -> str:
    """A person's message, then replies alternating between the bot and people; the parent's ts."""
    root = app.say("UALICE01", "what about the budget?")
    for n in range(replies):
        if n % 2 == 0:
            client(slack).chat_postMessage(channel=CHANNEL, thread_ts=root, text=f"bot reply {n}")
        else:
            app.say("UBOB0001", f"person reply {n}", thread_ts=root)
    return root


def test_a_thread_reads_back_parent_first_with_everyones_messages_in_order_in_slacks_shape(slack):
    app = ScriptedApp(slack)
    root = thread(slack, app)
    assert slack.calls_under("conversations.") == []  # what a test of "no reads per turn" counts
    messages = client(slack).conversations_replies(channel=CHANNEL, ts=root)["messages"]
    assert [c.method for c in slack.calls_under("conversations.")] == ["conversations.replies"]
    assert [m["text"] for m in messages] == ["what about the budget?", "bot reply 0", "person reply 1", "bot reply 2"]
    parent, first, second = messages[0], messages[1], messages[2]
    assert (parent["user"], parent["ts"], parent["thread_ts"], parent["reply_count"], parent["latest_reply"]) == (
        "UALICE01", root, root, 3, messages[-1]["ts"])
    assert parent["reply_users"] == [BOT_USER_ID, "UBOB0001"] and parent["reply_users_count"] == 2
    assert (first["user"], first["bot_id"], first["thread_ts"], first["parent_user_id"]) == (
        BOT_USER_ID, BOT_ID, root, "UALICE01")
    assert (second["user"], second["team"], second["type"]) == ("UBOB0001", TEAM_ID, "message")
    assert all("channel" not in m for m in messages) and [m["ts"] for m in messages] == sorted(m["ts"] for m in messages)
    assert [m["text"] for m in slack.posts()] == ["bot reply 0", "bot reply 2"]  # posts(): the bot's own only
    assert len(app.received) == 2  # the app heard of both people's messages


def test_a_reply_or_a_lone_message_reads_back_alone_and_unknown_ones_are_refused(slack):
    app = ScriptedApp(slack)
    root = thread(slack, app)
    reply = client(slack).conversations_replies(channel=CHANNEL, ts=root)["messages"][2]
    assert [m["ts"] for m in client(slack).conversations_replies(channel=CHANNEL, ts=reply["ts"])["messages"]] == [
        reply["ts"]]
    lone = app.say("UALICE01", "just this")
    [alone] = client(slack).conversations_replies(channel=CHANNEL, ts=lone)["messages"]
    assert alone["text"] == "just this" and "reply_count" not in alone and "thread_ts" not in alone
    assert refusal(lambda: client(slack).conversations_replies(channel=CHANNEL, ts="1799999999.000001")) == \
        "thread_not_found"
    assert refusal(lambda: client(slack).conversations_replies(channel="C0NOWHERE1", ts=root)) == "channel_not_found"
    slack.add_channel("C0QUIET01")
    assert refusal(lambda: client(slack).conversations_replies(channel="C0QUIET01", ts=root)) == "thread_not_found"
    assert slack.violations == []


def test_another_teams_channels_are_invisible_and_each_call_is_recorded_with_its_team(slack):
    other = slack.add_team()
    app = ScriptedApp(slack)
    root = app.say("UCAROL01", "in the other team", team=other)
    assert app.received[-1]["team_id"] == other.id and app.received[-1]["event"]["team"] == other.id
    assert client(slack, other.bot_token).conversations_replies(channel=CHANNEL, ts=root)["messages"][0]["text"] == \
        "in the other team"
    assert refusal(lambda: client(slack).conversations_replies(channel=CHANNEL, ts=root)) == "channel_not_found"
    assert [c.team for c in slack.calls_to("conversations.replies")] == [other.id, TEAM_ID]
    assert refusal(lambda: client(slack).api_call("conversations.replies", params={"channel": CHANNEL})) == \
        "invalid_arguments"
    assert slack.violations == ["conversations.replies: missing ['ts']"]
    slack.violations.clear()


def test_pages_hold_limit_messages_with_the_parent_again_on_each_later_page(slack):
    app = ScriptedApp(slack)
    root = thread(slack, app, replies=7)
    api = client(slack)
    first = api.conversations_replies(channel=CHANNEL, ts=root, limit=3)
    assert len(first["messages"]) == 3 and first["has_more"] and first["response_metadata"]["next_cursor"]
    pages = [first["messages"]]
    cursor = first["response_metadata"]["next_cursor"]
    while cursor:
        page = api.conversations_replies(channel=CHANNEL, ts=root, limit=3, cursor=cursor)
        assert page["messages"][0]["ts"] == root
        pages.append(page["messages"])
        cursor = page.get("response_metadata", {}).get("next_cursor") if page["has_more"] else None
    assert [len(p) for p in pages] == [3, 4, 3]
    seen = list(dict.fromkeys(m["ts"] for p in pages for m in p))
    assert len(seen) == 8 and seen == [m["ts"] for m in api.conversations_replies(channel=CHANNEL, ts=root)["messages"]]
    assert refusal(lambda: api.conversations_replies(channel=CHANNEL, ts=root, cursor="bm9wZQ==")) == "invalid_cursor"


def test_oldest_and_latest_narrow_the_replies_but_never_drop_the_parent(slack):
    app = ScriptedApp(slack)
    root = thread(slack, app, replies=4)
    everything = client(slack).conversations_replies(channel=CHANNEL, ts=root)["messages"]
    middle = client(slack).conversations_replies(channel=CHANNEL, ts=root, oldest=everything[1]["ts"],
                                                 latest=everything[3]["ts"])["messages"]
    assert [m["ts"] for m in middle] == [root, everything[2]["ts"]]
    inclusive = client(slack).conversations_replies(channel=CHANNEL, ts=root, oldest=everything[1]["ts"],
                                                    latest=everything[3]["ts"], inclusive=True)["messages"]
    assert [m["ts"] for m in inclusive] == [root] + [m["ts"] for m in everything[1:4]]


def test_an_app_without_a_bot_user_posts_with_a_bot_id_and_no_user(slack):
    app = ScriptedApp(slack)
    root = app.say("UALICE01", "deploy?")
    ts = app.other_app_says("Deployed 1.2.3", thread_ts=root)
    delivered = app.received[-1]["event"]
    assert (delivered["subtype"], delivered["bot_id"], "user" in delivered) == ("bot_message", "BOTHER01", False)
    reply = client(slack).conversations_replies(channel=CHANNEL, ts=root)["messages"][1]
    assert (reply["ts"], reply["subtype"], reply["bot_id"], "user" in reply) == (ts, "bot_message", "BOTHER01", False)


def test_a_mention_is_one_message_in_slack_though_the_app_hears_it_twice(slack):
    app = ScriptedApp(slack)
    ts = app.say("UALICE01", "hello", mention=True)
    assert [p["event"]["type"] for p in app.received] == ["message", "app_mention"]
    [message] = client(slack).conversations_replies(channel=CHANNEL, ts=ts)["messages"]
    assert message["text"] == f"<@{BOT_USER_ID}> hello"
    assert slack.message(ts, CHANNEL)["user"] == "UALICE01"
