import pytest

from bot.slack.render import neutralise
from bot.slack.split import split_markdown

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


def test_long_markdown_splits_under_the_limit_with_balanced_fences_and_nothing_lost():
    text = "intro\n```python\n" + "".join(f"x = {i}\n" for i in range(400)) + "```\noutro\n"
    pieces = split_markdown(text, 1000)
    assert len(pieces) > 1
    assert all(len(p) <= 1000 for p in pieces)
    assert all(p.count("```") % 2 == 0 for p in pieces)
    rejoined = "".join(p.removeprefix("```python\n").removesuffix("```") for p in pieces)
    assert [l for l in rejoined.splitlines() if l] == [l for l in text.splitlines() if l]


def test_short_markdown_is_one_piece():
    assert split_markdown("hello", 100) == ["hello"]
