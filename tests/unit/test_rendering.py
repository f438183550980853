"""Every block, view and text the renderers build is one Slack accepts (the fake Slack's Block Kit
checks), whatever the topic — up to the 4,000 characters of a slash command, hostile or not — and
however many forks there are; topics are escaped wherever they appear."""
import json
from datetime import datetime

import pytest

from bot.domain.model import (ChannelEconomy, ContextReport, ContextSize, Fork, ForkListing, ForkStats, ForkStatus,
                              Mode, Usage)
from bot.slack import render, views
from tests.fakes.block_kit import TEXT_LIMIT, blocks_problems, view_problems

HOSTILE = "<!here> <@U0BOSS01> [https://bank.example](https://evil.example) <https://evil.example|https://bank.example> & "
TOPICS = {
    "hostile": HOSTILE,
    "3,001 characters": "x" * 3_001,
    "4,000 ampersands": "&" * 4_000,  # 20,000 characters once escaped
    "4,000 hostile": (HOSTILE * 60)[:4_000],
    "none": "",
}


def fork(topic, number=1, status=ForkStatus.OPEN, merged_by=None):
    return Fork(id=number, channel_id="C1", team_id="T1", number=number, parent_id=1, mode=Mode.INHERIT, topic=topic,
                owner_id="U0OWNER1", fork_point_seq=3, status=status, root_ts="1700000000.000100",
                merged_by=merged_by, summary_ts="1700000000.000200" if merged_by else None,
                last_activity_at=datetime(2026, 1, 1))


def listing(topic, number=1):
    return ForkListing(fork(topic, number), ForkStats(3, Usage(100, 20)))


def raw_forms(text):
    """What would ping or phish if a topic reached Slack unescaped."""
    return [form for form in ("<!here>", "<@U0BOSS01>", "<https://evil") if form in text]


@pytest.mark.parametrize("name", TOPICS)
def test_fork_messages_are_accepted_and_escape_the_topic(name):
    topic = TOPICS[name]
    for each in (fork(topic), fork(topic, status=ForkStatus.MERGED, merged_by="U0CAROL1"),
                 fork(topic, status=ForkStatus.ABANDONED)):
        blocks = render.fork_root_blocks(each)
        text = render.fork_root_text(each)
        assert blocks_problems(blocks) == [] and len(text) <= TEXT_LIMIT
        assert raw_forms(str(blocks)) == [] and raw_forms(text) == []
    merged = fork(topic, status=ForkStatus.MERGED, merged_by="U0CAROL1")
    stats = ForkStats(4, Usage(10, 10), 5)
    assert blocks_problems(render.merge_blocks(merged, stats, "summary " * 3_000)) == []
    assert raw_forms(str(render.merge_blocks(merged, stats, "ok"))) == []
    for text, blocks in (render.reminder(fork(topic), "merge", 86_400), render.budget_notice(fork(topic), 9, 5)):
        assert blocks_problems(blocks) == [] and raw_forms(text) == []


def test_a_topic_is_whole_in_the_fallback_text_and_shortened_in_blocks():
    topic = "word " * 800  # 4,000 characters
    root = fork(topic.strip())
    assert topic.strip() in render.fork_root_text(root)
    [header] = [b for b in render.fork_root_blocks(root) if b["type"] == "section"][:1]
    assert len(header["text"]["text"]) <= 3_000 and header["text"]["text"].endswith("…")
    assert len(root.label) < 100 and root.label.endswith("…”")


def test_an_empty_summary_is_posted_as_a_notice_not_an_empty_block():
    blocks = render.merge_blocks(fork("t", status=ForkStatus.MERGED, merged_by="U1"), ForkStats(1, Usage()), " \n")
    assert blocks_problems(blocks) == [] and blocks[1]["text"] == render.EMPTY_SUMMARY


def test_the_summary_cannot_ping_or_phish():
    body = render.merge_blocks(fork("t", status=ForkStatus.MERGED, merged_by="U1"), ForkStats(1, Usage()),
                               "ask <@U0BOSS01> <!here> [https://bank.example](https://evil.example)",
                               {"U0BOSS01": "Boss"}.get)[1]["text"]
    assert "<@" not in body and "<!here>" not in body and "](https://evil" not in body and "Boss" in body


@pytest.mark.parametrize("name", TOPICS)
def test_home_forks_and_context_stay_within_slacks_limits_with_many_forks(name):
    many = [listing(TOPICS[name], n) for n in range(1, 151)]
    economy = [ChannelEconomy(f"C{n}", 100, 10) for n in range(150)]
    home = views.home_view(many, economy)
    assert view_problems(home) == [] and len(home["blocks"]) <= 100
    assert "…and 110 more open forks." in str(home) and "…and 110 more channels." in str(home)
    listed = views.forks_text(many, {ForkStatus.MERGED: 2})
    refused = views.open_forks_text([item.fork for item in many])
    report = ContextReport(ContextSize(10, 1_000), 160_000, 0, merged=many, open=[item.fork for item in many])
    for text in (listed, refused, views.context_text(report)):
        assert len(text) <= TEXT_LIMIT and raw_forms(text) == []


def test_forks_shows_whole_topics_while_they_fit_and_says_how_many_more_there_are():
    few = [listing("a topic worth reading in full " * 10, n) for n in range(1, 4)]
    assert ("a topic worth reading in full " * 10).strip() in views.forks_text(few, {})
    many = views.forks_text([listing("&" * 4_000, n) for n in range(1, 201)], {})
    assert len(many) <= views.LIST_BUDGET + 200 and "more open forks." in many


def test_a_fork_of_a_fork_names_its_parent_and_its_summary_shows_conflicts_in_a_section_of_its_own():
    from dataclasses import replace

    child = replace(fork("postgres", number=7), parent_id=3, depth=2, parent_number=3,
                    parent_root_ts="1700000000.000300")
    assert "Fork #7 — from fork #3" in render.fork_root_text(child)
    header = render.fork_root_blocks(child)[0]["text"]["text"]
    assert "Fork #7" in header and "fork #3>" in header and "p1700000000000300" in header
    merged = replace(child, status=ForkStatus.MERGED, merged_by="U0OWNER1")
    summary = "Use Postgres.\n\n⚠️ Conflicts with fork #4: fork #4 chose SQLite"
    blocks = render.merge_blocks(merged, ForkStats(3, Usage(100, 20), 40), summary)
    assert blocks_problems(blocks) == []
    assert "fork #3's context" in blocks[0]["text"]["text"]
    assert blocks[1] == {"type": "markdown", "text": "Use Postgres."}
    assert blocks[2]["text"]["text"] == "⚠️ Conflicts with fork #4: fork #4 chose SQLite"


def test_forks_and_home_list_forks_of_forks_under_their_parents():
    from dataclasses import replace

    top, sibling = listing("top", 1), listing("sibling", 2)
    child = ForkListing(replace(fork("child", 3), id=3, parent_id=1, depth=2, parent_number=1), top.stats)
    text = views.forks_text([top, sibling, child], {})
    lines = text.splitlines()
    assert [line.split("*#")[1].split("*")[0] for line in lines[1:4]] == ["1", "3", "2"]
    assert lines[2].startswith("\u2003↳ ")
    home = views.home_view([child], [])  # its parent is not in the list: shown at the top, saying where from
    assert "*#3* (from #1)" in json.dumps(home, ensure_ascii=False)


def test_a_refusal_to_close_a_fork_lists_its_open_forks_with_their_buttons():
    children = [fork("a", 2), fork("b", 3)]
    text, blocks = render.children_refusal("Fork #1 can't be merged yet", children)
    assert blocks_problems(blocks) == []
    actions = [b for b in blocks if b["type"] == "actions"]
    buttons = [[e["action_id"] for e in a["elements"]] for a in actions]
    assert buttons == [[render.MERGE_ACTION, render.ABANDON_ACTION]] * 2
    assert [a["elements"][0]["value"] for a in actions] == ["2", "3"]


@pytest.mark.parametrize("text", [
    ("word " * 2000).strip(),  # one 10,000-character paragraph: cut at spaces
    "\n".join(f"line {n} " + "x" * 90 for n in range(200)),  # single line breaks
    "\n\n".join(f"paragraph {n}\n" + "y" * 700 for n in range(20)),
    "z" * 7000,  # nothing to cut at
    "   leading and trailing   \n",
])
def test_a_long_draft_split_over_boxes_comes_back_byte_for_byte(text):
    from bot.slack.drafts import TEXT_BOX, edited_text, split

    parts, joins = split(text)
    assert all(0 < len(p) <= TEXT_BOX for p in parts) and len(joins) == len(parts) - 1
    view = {"private_metadata": json.dumps({"joins": joins}),
            "state": {"values": {f"summary_{n}": {"text": {"value": p}} for n, p in enumerate(parts, 1)}}}
    assert edited_text(view) == text.strip()


def test_a_reminder_under_review_says_a_draft_is_coming_not_a_merge():
    text, _ = render.reminder(fork("pricing"), "draft", 86_400)
    assert "draft summary to review" in text and "merged automatically" not in text


def test_the_home_tabs_spend_fits_one_section_however_many_channels_and_says_it_is_an_estimate():
    from bot.domain.spend import Spent
    from bot.slack.views import home_view, spend_text

    months = {f"C{n:08d}": Spent(n * 10_000, n * 1_000, n * 20_000, n % 2) for n in range(1, 400)}
    text = spend_text(months)
    assert len(text) <= 3000 and "estimated" in text and text.splitlines()[1].startswith("<#C00000399>: $3.99")
    assert text.endswith("more channels.")
    view = home_view([], [], months)
    assert view_problems(view) == [] and view["blocks"][-1]["text"]["text"] == text
    assert "Spend this month" not in str(home_view([], [], None))


def test_the_home_tabs_spend_shows_direct_messages_as_one_line_naming_nobody():
    from bot.domain.spend import Spent
    from bot.slack.views import spend_text

    text = spend_text({"C0GENERAL1": Spent(1_000_000), "D0ALICE001": Spent(2_000_000, 2_000_000),
                       "D0BOB00001": Spent(500_000)})
    assert "<#C0GENERAL1>: $1.00" in text and "D0ALICE001" not in text and "D0BOB00001" not in text
    assert text.splitlines()[-1] == "Direct messages with Threadfork (everyone's, together): $2.50"


def test_spend_that_no_price_covers_is_n_a_in_its_parts_too():
    from bot.domain.spend import Spent
    from bot.slack.views import spend_text

    line = spend_text({"C0GENERAL1": Spent(0, 0, 0, unpriced=3)}).splitlines()[1]
    assert line == "<#C0GENERAL1>: n/a — forks n/a, caching saved n/a, n/a for 3 calls"


def test_context_spend_says_n_a_for_what_no_price_covers_and_the_cap_in_force():
    from bot.domain.model import ContextReport, ContextSize
    from bot.domain.spend import Spent, SpendReport
    from bot.slack.views import context_text

    def report(month, cap=None):
        return ContextReport(ContextSize(2, 100), 1000, 0, [], [], spend=SpendReport(Spent(), month, "December 2026"),
                             cap_usd=cap)

    priced = context_text(report(Spent(2_500_000, 500_000, 4_000_000, 0), cap=10.0))
    assert "today $0.00 · December 2026 $2.50, of which forks $0.50; caching saved $1.50 this month" in priced
    assert "Monthly cap $10.00 (25% used)" in priced and "estimated" in priced
    unknown = context_text(report(Spent(0, 0, 0, 3)))
    assert "December 2026 n/a" in unknown and "n/a for 3 calls by a model missing from the price table" in unknown
    costly = context_text(report(Spent(3_000_000, 0, 1_000_000, 0)))
    assert "caching cost $2.00 more than it saved" in costly
