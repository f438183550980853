import pytest

from bot.slack.render import neutralise

RAW_FORMS = ["<!channel", "<!here", "<!everyone", "<!subteam^", "@channel", "@here"]


@pytest.mark.parametrize("text", [
    "<!channel> look", "<!here|here> now", "<!everyone>", "<!subteam^S123|@team> hi",
    "ping @channel and @here", "@everyone!", "<!CHANNEL>",
])
def test_special_mentions_are_broken(text):
    out = neutralise(text)
    assert not any(form.lower() in out.lower() for form in RAW_FORMS)


def test_ordinary_text_and_user_mentions_pass_unchanged():
    assert neutralise("email me at a@b.c, ask <@U123>") == "email me at a@b.c, ask <@U123>"
