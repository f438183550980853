"""How often answers being written are shown anew (bot/slack/paging.py): one alone at its floor, many at once
in a workspace less often each, so that together they stay near the budget and inside Slack's tier for the
call that shows them; other workspaces are not slowed."""
from bot.slack.paging import APPEND, UPDATE, Pacing


def test_one_answer_alone_is_shown_at_its_floor():
    pacing = Pacing(per_second=10)
    pacing.began("T1")
    assert pacing.interval("T1", 1.5) == 1.5
    assert pacing.interval("T1", 1.0) == 1.0


def test_many_answers_in_a_workspace_share_its_budget_and_leave_others_alone():
    pacing = Pacing(per_second=0.5)
    for _ in range(200):
        pacing.began("T1")
    assert pacing.interval("T1", 1.5) == 400.0  # 200 answers × one showing each 400 s = 0.5 a second
    assert pacing.interval("T2", 1.5) == 1.5


def test_many_answers_stay_inside_the_tier_of_the_call_that_shows_them_whatever_the_budget():
    pacing = Pacing(per_second=10)
    for _ in range(200):
        pacing.began("T1", APPEND)
    for _ in range(10):
        pacing.began("T1", UPDATE)
    appends_a_minute = 200 * 60 / pacing.interval("T1", 1.5, APPEND)
    updates_a_minute = 10 * 60 / pacing.interval("T1", 1.0, UPDATE)
    assert appends_a_minute <= 90 < 100  # chat.appendStream: Tier 4, 100 a minute per workspace
    assert updates_a_minute <= 45 < 50  # chat.update: Tier 3, 50 a minute per workspace


def test_a_top_level_answer_alone_updates_about_once_a_second_inside_chat_updates_tier():
    pacing = Pacing(per_second=10)
    pacing.began("T1", UPDATE)
    assert 1.0 <= pacing.interval("T1", 1.0, UPDATE) <= 1.4 and 60 / pacing.interval("T1", 1.0, UPDATE) < 50


def test_answers_that_ended_no_longer_count():
    pacing = Pacing(per_second=1)
    for _ in range(3):
        pacing.began("T1")
    assert pacing.interval("T1", 1.5) == 3.0
    for _ in range(3):
        pacing.ended("T1")
    assert pacing.interval("T1", 1.5) == 1.5
    pacing.began("T1")
    assert pacing.interval("T1", 0.5) == 1.0
