"""The fork's state machine and its review drafts (bot/domain/transitions.py), made on a plain row
as the memory store makes them: no store involved."""
from dataclasses import dataclass
from datetime import datetime, timedelta

import pytest

from bot.domain import transitions
from bot.domain.conditions import all_hold, apply
from bot.domain.errors import ForkClosed
from bot.domain.merge import ensure_mergeable
from bot.domain.model import Fork, ForkStatus, Mode, Usage

NOW = datetime(2026, 12, 2, 12, 0)
OPEN, MERGING, MERGED, ABANDONED = ForkStatus.OPEN, ForkStatus.MERGING, ForkStatus.MERGED, ForkStatus.ABANDONED


@dataclass
class Row:
    status: ForkStatus = OPEN
    last_activity_at: datetime = NOW - timedelta(hours=1)
    merged_by: str | None = None
    merge_owner: str | None = None
    merge_until: datetime | None = None
    merge_attempts: int = 0
    summary: str | None = None
    summary_tokens: int | None = None
    summary_ts: str | None = None
    summary_edited_by: str | None = None
    closed_at: datetime | None = None
    reminded_at: datetime | None = None
    draft_number: int = 0
    draft_text: str | None = None
    draft_seq: int | None = None
    draft_ts: str | None = None
    draft_by: str | None = None
    draft_input_tokens: int | None = None
    draft_output_tokens: int | None = None
    merge_guidance: str | None = None
    lease_until: datetime | None = None  # the session's: held while Claude answers in the fork


def make(move: transitions.Move, row: Row) -> bool:
    if not all_hold(move.conditions, row):
        return False
    apply(move.values, row)
    return True


def begin(row: Row, owner: str = "p1") -> bool:
    """A merge asked for and taken at once (nothing in flight)."""
    return make(transitions.request_merge("U1", "", NOW), row) and make(transitions.take_merge(owner, NOW, 60), row)


def test_a_merge_is_asked_for_unclaimed_with_its_guidance_and_drops_a_live_draft():
    row = Row(draft_text="draft", draft_number=1)
    assert make(transitions.request_merge("U1", "focus on risks", NOW), row)
    assert (row.status, row.merged_by, row.merge_guidance, row.merge_owner, row.merge_until) == \
        (MERGING, "U1", "focus on risks", None, None)
    assert (row.merge_attempts, row.draft_text) == (0, None)


def test_a_merge_asked_for_is_taken_once_claimed_for_one_attempt():
    row = Row()
    assert begin(row)
    assert (row.status, row.merged_by, row.merge_owner, row.merge_attempts) == (MERGING, "U1", "p1", 1)
    assert row.merge_until == NOW + timedelta(seconds=60)
    assert not make(transitions.take_merge("p2", NOW, 60), row)


def test_a_merge_is_not_taken_while_claude_answers_in_the_fork_and_is_once_the_answer_is_recorded():
    row = Row(lease_until=NOW + timedelta(seconds=30))
    assert make(transitions.request_merge("U1", "", NOW), row)
    assert not make(transitions.take_merge("p1", NOW, 60), row) and row.merge_owner is None
    assert not all_hold(transitions.stuck_merge(NOW), row)
    row.lease_until = None  # the answer recorded, the lease let go
    assert all_hold(transitions.stuck_merge(NOW), row)
    assert make(transitions.take_merge("p1", NOW, 60), row) and row.merge_attempts == 1


def test_a_second_merge_of_the_same_fork_is_refused_and_changes_nothing():
    row = Row()
    assert begin(row, "p1") and not begin(row, "p2")
    assert row.merge_owner == "p1"


@pytest.mark.parametrize("status", [MERGING, MERGED, ABANDONED])
def test_only_an_open_fork_may_be_merged_or_abandoned(status):
    row = Row(status=status)
    assert not begin(row) and not make(transitions.abandon(NOW), row) and row.status is status


def test_the_store_and_the_use_cases_agree_on_what_is_mergeable():
    assert transitions.request_merge("U1", "", NOW).source == transitions.MERGEABLE_FROM
    assert transitions.approve(1, "x", "U1", False).source == transitions.MERGEABLE_FROM


def test_a_fork_active_since_the_idle_cutoff_is_neither_merged_nor_abandoned_for_idleness():
    cutoff = NOW - timedelta(hours=2)
    row = Row()  # active an hour ago
    assert not make(transitions.request_merge("U1", "", NOW, idle_before=cutoff), row)
    assert not make(transitions.abandon(NOW, idle_before=cutoff), row) and row.status is OPEN
    assert make(transitions.abandon(NOW, idle_before=NOW), row) and row.status is ABANDONED


def test_abandoning_closes_the_fork_and_drops_its_draft():
    row = Row(draft_text="draft")
    assert make(transitions.abandon(NOW), row)
    assert (row.status, row.draft_text, row.closed_at) == (ABANDONED, None, NOW)


def test_a_failed_merge_reopens_the_fork_without_its_claim():
    row = Row()
    begin(row)
    assert make(transitions.cancel_merge(), row)
    assert (row.status, row.merged_by, row.merge_owner, row.merge_until) == (OPEN, None, None, None)
    assert not make(transitions.cancel_merge(), row)


def test_completing_a_merge_keeps_the_summary_and_ends_the_review_only_while_merging():
    row = Row(draft_text="draft")
    assert not make(transitions.complete_merge("sum", Usage(output_tokens=7), NOW), row)
    begin(row)
    assert make(transitions.complete_merge("sum", Usage(output_tokens=7), NOW), row)
    assert (row.status, row.summary, row.summary_tokens, row.draft_text, row.closed_at) == (MERGED, "sum", 7, None, NOW)


def test_a_merge_is_stuck_when_its_claim_lapsed_before_it_was_written_or_announced():
    stuck = transitions.stuck_merge(NOW)
    lapsed = NOW - timedelta(seconds=1)
    assert all_hold(stuck, Row(status=MERGING, merge_until=lapsed))
    assert all_hold(stuck, Row(status=MERGED, merge_until=lapsed))
    assert not all_hold(stuck, Row(status=MERGED, merge_until=lapsed, summary_ts="1.2"))
    assert not all_hold(stuck, Row(status=MERGING, merge_until=NOW))
    assert all_hold(stuck, Row(status=MERGING))  # asked for, never taken
    assert not all_hold(stuck, Row(status=MERGED))  # announcing it was given up
    assert not all_hold(stuck, Row(status=MERGING, lease_until=NOW + timedelta(seconds=1)))  # Claude answering


def test_a_stuck_merge_is_taken_over_once_counting_one_more_attempt():
    row = Row(status=MERGING, merge_until=NOW - timedelta(seconds=1), merge_attempts=1)
    assert make(transitions.take_merge("p2", NOW, 60), row)
    assert (row.merge_owner, row.merge_attempts, row.merge_until) == ("p2", 2, NOW + timedelta(seconds=60))
    assert not make(transitions.take_merge("p3", NOW, 60), row)


def test_giving_up_reopens_a_merge_being_written_but_leaves_a_merged_fork_merged():
    writing, merged = Row(status=MERGING, merged_by="U1", merge_attempts=4), Row(status=MERGED, merged_by="U1")
    for row in (writing, merged):
        for move in transitions.give_up_merge():
            make(move, row)
        assert (row.merge_owner, row.merge_until, row.merge_attempts) == (None, None, 0)
    assert (writing.status, writing.merged_by) == (OPEN, None)
    assert (merged.status, merged.merged_by) == (MERGED, "U1")


def test_a_released_claim_lapses_at_once_and_a_renewed_one_lasts_its_seconds():
    assert transitions.released_claim(NOW) == {"merge_until": NOW - timedelta(seconds=1), "merge_owner": None}
    assert transitions.renewed_claim(NOW, 30) == {"merge_until": NOW + timedelta(seconds=30)}
    assert all_hold(transitions.claims_of(("p1",)), Row(merge_owner="p1", merge_until=NOW))
    assert not all_hold(transitions.claims_of(("p1",)), Row(merge_owner="p1"))


def test_an_idle_fork_is_reminded_once():
    row = Row()
    assert all_hold(transitions.idle(NOW, unreminded=True), row)
    assert make(transitions.remind(NOW, NOW), row) and row.reminded_at == NOW
    assert not make(transitions.remind(NOW, NOW), row)
    assert not all_hold(transitions.idle(NOW, unreminded=True), row) and all_hold(transitions.idle(NOW), row)


def test_a_draft_is_claimed_by_one_writer_while_the_claim_is_live():
    row = Row()
    assert make(transitions.begin_draft(0, "p1", NOW, 60), row) and row.merge_owner == "p1"
    assert not make(transitions.begin_draft(0, "p2", NOW, 60), row)
    assert make(transitions.begin_draft(0, "p2", NOW + timedelta(seconds=61), 60), row) and row.merge_owner == "p2"


def test_a_draft_is_recorded_only_by_its_claimer_and_adds_up_what_drafts_cost():
    row = Row(draft_input_tokens=10, draft_output_tokens=1)
    make(transitions.begin_draft(0, "p1", NOW, 60), row)
    assert not make(transitions.record_draft(1, "text", 5, Usage(20, 2), "U1", "p2"), row)
    assert make(transitions.record_draft(1, "text", 5, Usage(20, 2), "U1", "p1"), row)
    assert (row.draft_number, row.draft_text, row.draft_seq, row.draft_by) == (1, "text", 5, "U1")
    assert (row.merge_owner, row.draft_input_tokens, row.draft_output_tokens) == (None, 30, 3)
    assert not make(transitions.record_draft(1, "again", 6, Usage(), "U1", "p1"), row)


def test_a_person_acts_only_on_the_draft_they_saw():
    row = Row(draft_number=2, draft_text="second")
    assert not make(transitions.drop_draft(1), row)
    assert not make(transitions.approve(1, "x", "U1", False), row)
    assert make(transitions.drop_draft(2), row) and row.draft_text is None
    assert not make(transitions.drop_draft(2), row)


def test_approving_a_draft_merges_it_and_says_who_edited_it():
    row = Row(draft_number=1, draft_text="draft")
    assert make(transitions.approve(1, "edited", "U2", True), row)
    assert (row.status, row.draft_text, row.summary_edited_by, row.merged_by) == (MERGING, "edited", "U2", "U2")
    assert (row.merge_owner, row.merge_attempts) == (None, 0)  # then taken as any merge is
    assert not make(transitions.approve(1, "edited", "U3", False), row)


def test_a_drafts_message_is_remembered_only_for_that_draft():
    row = Row(draft_number=2)
    assert not make(transitions.draft_posted(1, "1.1"), row) and make(transitions.draft_posted(2, "2.2"), row)
    assert row.draft_ts == "2.2"


def test_use_cases_refuse_to_merge_what_the_store_would_not_move():
    with pytest.raises(ForkClosed):
        ensure_mergeable(Fork(1, "C", "T", 1, 1, Mode.INHERIT, "", "U", None, MERGED))
