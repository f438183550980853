"""Slack's real message shapes, end to end: a DM from Slackbot, a shared or forwarded message (its
content in a share attachment), and a Slack Connect file stub resolved with files.info."""
import json

from sqlalchemy import text

from ..fakes.anthropic_api import request_texts
from ..fakes.samples import png
from ..harness import BOT_TOKEN, CHANNEL, wait_until

DM = "D0ALICE01"


def kept_deliveries(bot) -> int:
    """Rows of the durable inbox (a processed one keeps only its key, so they are counted, not read)."""
    with bot.db.engine.connect() as conn:
        return conn.execute(text("SELECT COUNT(*) FROM inbox")).scalar()


def content_blocks(request: dict) -> list[dict]:
    return [block for message in request["messages"] for block in message["content"]]


def test_a_direct_message_from_slackbot_asks_claude_nothing_posts_nothing_and_is_not_kept(bot, slack, claude):
    bot.slackbot_says("Reminder: send the quarterly report.")
    bot.say("UALICE01", "hello", channel=DM, channel_type="im")  # a person's DM after it is answered as usual
    wait_until(lambda: slack.posts(DM))
    bot.settled()
    [request] = claude.requests
    assert "quarterly report" not in json.dumps(request)
    assert slack.posts("D0SLACKBOT1") == [] and slack.calls_to("chat.postEphemeral") == []
    assert kept_deliveries(bot) == 1  # the person's DM; Slackbot's was never kept


def test_a_shared_message_with_a_question_reaches_claude_with_its_words_and_who_wrote_them(bot, slack, claude):
    slack.person("UBOB0001", real_name="Bob Builder")
    original = bot.said("UBOB0001", "the deploy is blocked on the schema migration", channel="C0OPS0001")
    share = bot.shared(original, name="Bob Builder")
    bot.say("UALICE01", "what should we do about this?", mention=True, attachments=[share])
    wait_until(lambda: slack.posts(CHANNEL))
    bot.settled()
    [request] = claude.requests  # one request, though the mention arrived as message and app_mention
    assert request_texts(request)[-1].endswith(
        "what should we do about this?\n\n"
        "[shared a message from Bob Builder <@UBOB0001>]\n"
        "> the deploy is blocked on the schema migration")


def test_a_forward_with_no_words_in_a_dm_is_a_turn_not_the_empty_message_hint(bot, slack, claude):
    original = bot.said("UBOB0001", "line one\nline two", channel="C0OPS0001")
    bot.say("UALICE01", "", channel=DM, channel_type="im", attachments=[bot.shared(original, name="Bob")])
    wait_until(lambda: slack.posts(DM))
    bot.settled()
    [request] = claude.requests
    assert request_texts(request)[-1].endswith("[shared a message from Bob <@UBOB0001>]\n> line one\n> line two")
    assert slack.calls_to("chat.postEphemeral") == []  # no "empty message" hint


def test_a_share_in_the_channel_that_does_not_mention_the_bot_stays_chatter(bot, slack, claude):
    ts = bot.new_ts()  # a message from long ago: only its share reaches the app now
    original = {"type": "message", "user": "UBOB0001", "text": "<@UBOT0001> is mentioned in the shared words only",
                "ts": ts, "channel": "C0OPS0001"}
    bot.say("UALICE01", "look at this", attachments=[bot.shared(original)])
    bot.settled()
    assert claude.requests == [] and slack.posts(CHANNEL) == [] and slack.calls_to("chat.postEphemeral") == []
    assert kept_deliveries(bot) == 0  # chatter is never kept


def test_a_shared_message_brings_its_own_files_into_the_turn(bot, slack, claude):
    image = slack.share_file("chart.png", png(20, 10), "image/png", "png", user="UBOB0001")
    original = bot.said("UBOB0001", "numbers are up", channel="C0OPS0001", files=[image])
    bot.say("UALICE01", "explain", mention=True, attachments=[bot.shared(original, name="Bob")])
    wait_until(lambda: slack.posts(CHANNEL))
    bot.settled()
    [request] = claude.requests
    [upload] = claude.files.uploads
    assert content_blocks(request)[0]["source"] == {"type": "file", "file_id": upload.file_id}
    assert request_texts(request)[-1].endswith(
        "explain\n\n[shared a message from Bob <@UBOB0001>, with chart.png]\n> numbers are up")


def test_a_slack_connect_file_stub_is_resolved_with_one_files_info_call_and_read_like_any_other(bot, slack, claude):
    stub = slack.share_file("diagram.png", png(30, 20), "image/png", "png", connect="visible")
    assert "url_private_download" not in stub and stub["file_access"] == "check_file_info"
    bot.say("UALICE01", "what does this show?", mention=True, files=[stub])  # as message and app_mention
    wait_until(lambda: slack.posts(CHANNEL))
    bot.settled()
    [info] = slack.calls_to("files.info")
    assert info["file"] == stub["id"] and info.token == BOT_TOKEN
    [download] = slack.downloads_of(stub["id"])
    assert download.served
    [request] = claude.requests
    [upload] = claude.files.uploads
    assert upload.filename == "diagram.png"
    assert content_blocks(request)[0]["source"] == {"type": "file", "file_id": upload.file_id}
    assert slack.calls_to("chat.postEphemeral") == []


def test_a_slack_connect_file_slack_keeps_from_the_bot_gets_one_private_notice_naming_it(bot, slack, claude):
    stub = slack.share_file("secret-plan.pdf", b"%PDF-1.4", "application/pdf", "pdf", connect="hidden")
    bot.say("UALICE01", "", channel=DM, channel_type="im", files=[stub])
    [notice] = wait_until(lambda: slack.calls_to("chat.postEphemeral"))
    bot.settled()
    assert notice["user"] == "UALICE01" and stub["id"] in notice["text"]
    assert "Slack would not let me download it" in notice["text"]
    assert len(slack.calls_to("files.info")) == 1 and slack.downloads_of(stub["id"]) == []
    assert claude.requests == [] and slack.posts(DM) == []


def test_a_hidden_connect_file_with_words_is_named_privately_and_the_words_are_answered(bot, slack, claude):
    stub = slack.share_file("budget.csv", b"a,b\n1,2\n", "text/csv", "csv", connect="hidden")
    bot.say("UALICE01", "summarise the budget", mention=True, files=[stub])
    wait_until(lambda: slack.posts(CHANNEL))
    bot.settled()
    [notice] = slack.calls_to("chat.postEphemeral")
    assert notice["user"] == "UALICE01" and f"*{stub['id']}* (Slack would not let me download it)" in notice["text"]
    assert len(slack.calls_to("files.info")) == 1
    [request] = claude.requests
    assert request_texts(request)[-1].endswith("summarise the budget")


def test_an_empty_direct_message_gets_a_hint_that_does_not_speak_of_a_mention(bot, slack, claude):
    bot.say("UALICE01", "", channel=DM, channel_type="im")
    [hint] = wait_until(lambda: slack.calls_to("chat.postEphemeral"))
    bot.settled()
    assert "empty message" in hint["text"] and "mention" not in hint["text"]
    assert claude.requests == []


def test_editing_the_words_of_a_share_keeps_the_shared_message_in_the_turn(bot, slack, claude):
    original = bot.said("UBOB0001", "the deploy is blocked", channel="C0OPS0001")
    share = bot.shared(original, name="Bob")
    sent = bot.said("UALICE01", "thoughts?", mention=True, attachments=[share])
    wait_until(lambda: slack.posts(CHANNEL))
    bot.settled()
    before = {k: v for k, v in sent.items() if k not in ("channel", "event_ts", "channel_type")}
    changed = {**before, "text": "<@UBOT0001> thoughts, anyone?", "edited": {"user": "UALICE01", "ts": bot.new_ts()}}
    edit = {"type": "message", "subtype": "message_changed", "channel": CHANNEL, "hidden": True, "ts": bot.new_ts(),
            "event_ts": bot.new_ts(), "channel_type": "channel", "message": changed, "previous_message": before}
    assert bot.event(edit).status == 200
    bot.say("UALICE01", "and now?", mention=True)
    wait_until(lambda: len(claude.requests) == 2)
    assert "thoughts, anyone?\n\n[shared a message from Bob <@UBOB0001>]\n> the deploy is blocked" in \
        "\n".join(request_texts(claude.requests[1]))
