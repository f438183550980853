"""Claude's words and fork topics can neither ping nor phish (bot/domain/text.py)."""
import re

import pytest
from hypothesis import example, given, settings
from hypothesis import strategies as st

from bot.domain.text import HIDDEN, ZWSP, Masker, inert, mrkdwn, neutralise, settled, topic

NAMES = {"U0ALICE1": "Alice", "W0BOB002": "Bob Builder", "U0EVIL01": "<!here> [x](https://evil.example)"}
# what Slack turns into a notification: a user mention, a special mention, an @channel word
PINGS = re.compile(r"<@[A-Z0-9]+(\|[^<>\n]*)?>|<!(channel|here|everyone|subteam)[^<>\n]*>|@(channel|here|everyone)\b",
                   re.IGNORECASE)


def safe(text):
    return neutralise(text, NAMES.get)


def links(markdown):
    """(label, target) of every Markdown or mrkdwn link that still forms."""
    found = re.findall(r"\[([^\[\]\n]*)\]\(([^()\s]*)\)", markdown)
    return found + [(label, target) for target, label in re.findall(r"<([a-z]+:[^|<>\n]*)\|([^<>\n]*)>", markdown)]


@pytest.mark.parametrize("text", [
    "<!channel> look", "<!here|here> now", "<!here|with a label> now", "<!everyone>", "<!subteam^S123|@team> hi",
    "ping @channel and @here", "@everyone!", "<!CHANNEL>", "hi <@U0ALICE1>", "<@W0BOB002|someone> look",
    "<@U0NOBODY>", "<@u0alice1>", "<@U0EVIL01>",
])
def test_nobody_can_be_notified(text):
    assert not PINGS.search(safe(text).replace(ZWSP, "\0"))


def test_user_mentions_become_names_without_a_notification():
    assert safe("thanks <@U0ALICE1> and <@W0BOB002|bob>") == f"thanks @{ZWSP}Alice and @{ZWSP}Bob Builder"
    assert safe("and <@U0NOBODY>") == f"and @{ZWSP}U0NOBODY"  # an unknown id is shown as itself
    assert neutralise("<@U0ALICE1>") == f"@{ZWSP}U0ALICE1"  # without a way to look names up


def test_a_persons_chosen_name_cannot_form_a_link_or_a_mention():
    shown = safe("by <@U0EVIL01>")
    assert links(shown) == [] and not PINGS.search(shown.replace(ZWSP, "\0"))


@pytest.mark.parametrize("text", [
    "[https://bank.example](https://evil.example)", "<https://evil.example|https://bank.example>",
    "[paypal.com](https://paypal.com.evil.example/login)", "[www.bank.example](https://evil.example)",
    "[bank.example/login](https://evil.example)", "[10.0.0.1](https://evil.example)",
    "[раураl.com](https://evil.example)", "[bank．example](https://evil.example)",
    "[[https://a.example](https://b.example)](https://evil.example)",
    "<mailto:x@evil.example|https://bank.example>",
])
def test_a_link_never_shows_an_address_other_than_its_target(text):
    shown = safe(text)
    assert links(shown) == [], shown
    assert "evil.example" in shown  # the real target stays visible, as itself


def test_a_label_too_long_to_look_through_is_not_trusted():
    shown = safe("[https://bank.example" + " " * 5_000 + "](https://evil.example)")
    assert "](https://evil" not in shown and f"]{ZWSP}(" in shown


def test_a_link_definition_cannot_give_a_label_a_hidden_target():
    shown = safe("see [https://bank.example]\n\n[https://bank.example]: https://evil.example")
    assert f"]{ZWSP}:" in shown


@pytest.mark.parametrize("text", [
    "read [the docs](https://docs.example/guide) first", "<https://docs.example|the docs>",
    "email me at a@b.c", "plain https://bank.example stays a bare address",
    "```\n[https://a.example](https://b.example)\n```",  # code is shown as written
])
def test_honest_text_passes_unchanged(text):
    assert safe(text) == text


# pieces of mentions, links, definitions and fences, in any order
HOSTILE = st.lists(st.sampled_from(list("<>[]()!@|:/. \n`abc") + [
    "here", "channel", "https://x.example", "U0ALICE1", "```", "bank.example", "<@", "<!", "]("]),
    max_size=40).map("".join)


@settings(max_examples=400, deadline=None)
@given(HOSTILE)
@example("here<!channel@|<@channel> later >")  # the mention becomes a name: the `<!` finds the `>`
@example("<https://b.example|see https://a.example>")
def test_what_streams_is_never_taken_back(text):
    """Each settled start of an answer, neutralised, is a start of the whole answer neutralised: a
    streamed message (append-only) ends up exactly as the final text would be posted."""
    final = safe(text)
    for end in range(len(text) + 1):
        assert final.startswith(safe(settled(text[:end]))), (text, end)


@settings(max_examples=200, deadline=None)
@given(HOSTILE)
def test_hostile_text_never_pings_or_phishes(text):
    shown = safe(text)
    assert not PINGS.search(shown.replace(ZWSP, "\0"))
    assert all(not re.search(r"[\w-]+\.[a-z]{2,}|://", label) for label, _ in links(shown)), shown


def test_a_topic_is_escaped_folded_and_shortened_to_fit():
    assert topic("a & b <!here> <@U1> @channel\n next") == f"a &amp; b &lt;!here&gt; &lt;@U1&gt; @{ZWSP}channel next"
    long = "& " * 3000
    shown = topic(long, 150)
    assert len(shown) <= 150 and shown.endswith("…") and "&amp" in shown and not shown.endswith("&…")
    assert topic("short", 150) == "short"
    assert mrkdwn("<https://b|https://a>") == "&lt;https://b|https://a&gt;"


def test_outside_data_is_one_inert_line_that_neither_pings_nor_hides_an_address():
    shown = inert("<!channel> <@U2>\n<https://evil.example/phish|https://docs.example.com/ok> <https://evil.example|ok> "
                  "[docs](https://evil.example/x) x<!here>tool", 256)
    assert "<!channel>" not in shown and "<!here>" not in shown and "<@U2>" not in shown and "\n" not in shown
    assert "https://docs.example.com/ok (https://evil.example/phish)" in shown and "ok (https://evil.example)" in shown
    assert "docs (https://evil.example/x)" in shown and "<" not in shown and ">" not in shown
    assert len(inert("word " * 100, 40)) == 40 and inert("word " * 100, 40).endswith("…")


def test_a_secret_is_masked_whole_and_never_shown_in_part_while_text_streams():
    masker = Masker(["tok-SECRET-1234"])
    pieces = ["bearer tok-SE", "CRET-12", "34 rejected; tok-", "other"]
    shown = [masker.feed(p) for p in pieces] + [masker.rest()]
    assert "".join(shown) == f"bearer {HIDDEN} rejected; tok-other"
    assert all("SECRET" not in s and "tok-SE" not in s for s in shown)
    assert Masker([]).feed("tok-SE") == "tok-SE"
