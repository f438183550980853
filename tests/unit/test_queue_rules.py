"""The turn queue's rules (bot/domain/queue.py), on plain values: no store involved."""
from datetime import datetime, timedelta

from bot.domain.conditions import holds
from bot.domain.model import Fork, ForkStatus, Mode, Role, Session, Turn, TurnStatus
from bot.domain.queue import (
    MAX_ATTEMPTS,
    Waiting,
    held_by,
    held_by_any,
    lease_lapsed,
    lease_takeable,
    lease_until,
    next_batch,
    one_too_many,
    stalled_turn,
)

NOW = datetime(2026, 12, 2, 12, 0)
PARENT = Session(1, "C1", "T1")


def closed_fork(status: ForkStatus, merge_taken: bool = False) -> Session:
    fork = Fork(2, "C1", "T1", 1, 1, Mode.INHERIT, "", "U1", None, status, merge_taken=merge_taken)
    return Session(2, "C1", "T1", fork)


def turn(seq: int) -> Turn:
    return Turn(1, seq, Role.USER, f"message {seq}", status=TurnStatus.PENDING, id=seq)


class Row:
    def __init__(self, **fields):
        self.__dict__.update(fields)


def test_every_waiting_turn_goes_into_one_batch_in_order():
    batch = next_batch([Waiting(turn(1), 0), Waiting(turn(2), 1)], PARENT)
    assert batch.answer == [turn(1), turn(2)] and batch.failed == [] and batch.given_up == []
    assert not batch.release


def test_a_turn_begun_max_attempts_times_is_given_up_and_the_others_are_still_answered():
    batch = next_batch([Waiting(turn(1), MAX_ATTEMPTS), Waiting(turn(2), MAX_ATTEMPTS - 1)], PARENT)
    assert batch.answer == [turn(2)]
    assert batch.failed == [turn(1)] and batch.given_up == [turn(1)]


def test_only_given_up_turns_release_the_lease_with_their_authors_owed_a_notice():
    batch = next_batch([Waiting(turn(1), MAX_ATTEMPTS)], PARENT)
    assert batch.release and batch.answer == [] and batch.given_up == [turn(1)]


def test_nothing_waiting_releases_the_lease_and_owes_nobody_anything():
    batch = next_batch([], PARENT)
    assert batch.release and batch.failed == [] and batch.given_up == []


def test_a_closed_fork_fails_its_waiting_turns_without_a_notice_for_those_not_given_up():
    for fork in (closed_fork(ForkStatus.MERGING, merge_taken=True), closed_fork(ForkStatus.MERGED),
                 closed_fork(ForkStatus.ABANDONED)):
        batch = next_batch([Waiting(turn(1), 0), Waiting(turn(2), MAX_ATTEMPTS)], fork)
        assert batch.release and batch.answer == []
        assert set(batch.failed) == {turn(1), turn(2)} and batch.given_up == [turn(2)]


def test_a_fork_whose_merge_waits_for_its_answers_still_answers_what_was_said_before_it():
    assert next_batch([Waiting(turn(1), 0)], closed_fork(ForkStatus.MERGING)).answer == [turn(1)]


def test_an_open_fork_answers_like_a_parent():
    assert next_batch([Waiting(turn(1), 0)], closed_fork(ForkStatus.OPEN)).answer == [turn(1)]


def test_the_try_after_the_last_allowed_one_is_one_too_many():
    assert [one_too_many(n) for n in range(1, MAX_ATTEMPTS + 2)] == [False] * MAX_ATTEMPTS + [True]


def test_a_lease_lapses_the_given_seconds_after_it_was_taken_or_renewed():
    assert lease_until(NOW, 90) == NOW + timedelta(seconds=90)


def test_a_lease_nobody_holds_or_that_lapsed_may_be_taken_by_anyone():
    for until in (None, NOW - timedelta(seconds=1)):
        row = Row(lease_owner="other", lease_until=until)
        assert holds(lease_takeable("me", NOW), row) and holds(lease_lapsed(NOW), row)


def test_a_live_lease_may_be_taken_again_only_by_its_holder():
    row = Row(lease_owner="other", lease_until=NOW)  # lapses only after now
    assert not holds(lease_takeable("me", NOW), row) and not holds(lease_lapsed(NOW), row)
    assert holds(lease_takeable("other", NOW), row)


def test_only_the_holder_renews_or_releases_a_lease():
    row = Row(lease_owner="me", lease_until=NOW)
    assert holds(held_by("me"), row) and not holds(held_by("other"), row)
    assert holds(held_by_any(["other", "me"]), row) and not holds(held_by_any([]), row)
    assert not holds(held_by("me"), Row(lease_owner=None, lease_until=None))


def test_a_session_needs_answering_when_a_reply_streams_or_a_turn_has_waited_too_long():
    stalled = stalled_turn(NOW)
    assert holds(stalled, Row(status=TurnStatus.STREAMING, created_at=NOW + timedelta(seconds=5)))
    assert holds(stalled, Row(status=TurnStatus.PENDING, created_at=NOW))
    assert not holds(stalled, Row(status=TurnStatus.PENDING, created_at=NOW + timedelta(seconds=1)))
    assert not holds(stalled, Row(status=TurnStatus.ANSWERED, created_at=NOW - timedelta(hours=1)))
