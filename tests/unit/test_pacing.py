"""How often answers being written are shown anew (bot/slack/pacing.py): one alone at its floor, many at once
in a workspace less often each, so that together they stay near the budget; other workspaces are not slowed."""
from bot.slack.pacing import Pacing


def test_one_answer_alone_is_shown_at_its_floor():
    pacing = Pacing(per_second=10)
    pacing.began("T1")
    assert pacing.interval("T1", 1.5) == 1.5
    assert pacing.interval("T1", 1.0) == 1.0


def test_many_answers_in_a_workspace_share_its_budget_and_leave_others_alone():
    pacing = Pacing(per_second=10)
    for _ in range(200):
        pacing.began("T1")
    assert pacing.interval("T1", 1.5) == 20.0  # 200 answers × one showing each 20 s = 10 a second
    assert pacing.interval("T2", 1.5) == 1.5


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
