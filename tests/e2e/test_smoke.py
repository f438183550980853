from ..harness import CHANNEL, wait_until


def test_a_mention_gets_one_reply_at_the_channel_top_level(bot, slack, claude):
    bot.say("UALICE01", "What is 2+2?", mention=True)
    reply = wait_until(lambda: slack.posts(CHANNEL, top_level=True), message="a reply")
    bot.quiesce()
    assert len(slack.posts(CHANNEL)) == 1
    assert reply[0]["markdown_text"] == "Answer 1"
    assert len(claude.requests) == 1
