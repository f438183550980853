"""The store contract for summaries under review, on the in-memory store, SQLite and PostgreSQL: one
caller claims each draft, one live draft per fork, one approval, and the review ends with the merge."""

from bot.domain.model import Channel, ForkStatus, Mode, Role, TurnStatus, Usage

from .test_contract import race
from .use_cases import merge_in

GENERAL = Channel("T1", "C1")


def open_fork(store):
    fork = store.sessions.create_fork(GENERAL, "U1", Mode.FRESH, "topic")
    store.turns.append_turn(fork.id, Role.USER, "hello", TurnStatus.ANSWERED, author_id="U1")
    return store.sessions.fork(fork.id)


def drafted(store, fork, text="Draft text.", owner="owner"):
    number = store.reviews.begin_draft(fork.id, fork.draft_number, owner, 60)
    assert store.reviews.record_draft(fork.id, number, text, 1, Usage(100, 10), "U1", owner)
    return number


def test_writing_a_draft_is_claimed_by_one_caller_until_it_is_recorded_or_released(store):
    fork = open_fork(store)
    won = race(8, lambda: store.reviews.begin_draft(fork.id, 0, "owner", 60))
    assert sorted(won) == [0] * 7 + [1]
    assert store.sessions.fork(fork.id).draft is None  # being written: not live yet
    assert store.reviews.begin_draft(fork.id, 0, "other", 60) == 0  # its claim holds
    store.reviews.release_draft(fork.id, "owner")  # the writing failed: the claim is given back
    assert store.reviews.begin_draft(fork.id, 0, "other", 60) == 1
    assert store.reviews.record_draft(fork.id, 1, "late", 1, Usage(), "U1", "owner") is False  # not its claim
    assert store.reviews.record_draft(fork.id, 1, "text", 1, Usage(), "U2", "other") is True


def test_a_redraft_whose_writing_fails_leaves_the_live_draft_as_it_was(store):
    fork = open_fork(store)
    drafted(store, fork, "the live one")
    store.reviews.set_draft_ts(fork.id, 1, "111.1")
    assert store.reviews.begin_draft(fork.id, 1, "redrafter", 60) == 2
    meanwhile = store.sessions.fork(fork.id).draft
    assert (meanwhile.number, meanwhile.text, meanwhile.ts) == (1, "the live one", "111.1")
    store.reviews.release_draft(fork.id, "redrafter")
    assert store.sessions.fork(fork.id).draft == meanwhile


def test_a_dead_writers_claim_lapses(store, clock):
    fork = open_fork(store)
    assert store.reviews.begin_draft(fork.id, 0, "owner", 60) == 1
    clock.advance(seconds=61)
    assert store.reviews.begin_draft(fork.id, 0, "other", 60) == 1
    assert store.reviews.record_draft(fork.id, 1, "late", 1, Usage(), "U1", "owner") is False  # taken over


def test_a_recorded_draft_is_live_with_its_message_and_its_usage_added_up(store):
    fork = open_fork(store)
    first = drafted(store, fork, "one")
    store.reviews.set_draft_ts(fork.id, first, "111.1")
    second = drafted(store, store.sessions.fork(fork.id), "two")
    live = store.sessions.fork(fork.id)
    assert (live.draft.number, live.draft.text, live.draft.ts, live.draft.requested_by) == (2, "two", None, "U1")
    assert live.draft.usage == Usage(200, 20) and second == 2 and live.draft_number == 2
    assert store.views.stats(fork.id).burned.total >= 220


def test_a_cancelled_draft_is_dropped_once(store):
    fork = open_fork(store)
    number = drafted(store, fork)
    assert sorted(race(4, lambda: store.reviews.drop_draft(fork.id, number))) == [False] * 3 + [True]
    assert store.sessions.fork(fork.id).draft is None
    assert store.sessions.fork(fork.id).status is ForkStatus.OPEN


def test_a_draft_is_approved_once_and_the_merge_ends_the_review(store):
    fork = open_fork(store)
    number = drafted(store, fork)
    results = race(8, lambda: store.reviews.approve(fork.id, number, "Edited.", "U2", True))
    assert sorted(results) == [False] * 7 + [True]
    merging = store.sessions.fork(fork.id)
    assert merging.status is ForkStatus.MERGING and merging.merged_by == "U2"
    assert merging.draft.text == "Edited." and merging.summary_edited_by == "U2"  # kept for a resumed merge
    merge_in(store, merging, "[Merged]\nEdited.", "Edited.", Usage(output_tokens=3))
    merged = store.sessions.fork(fork.id)
    assert merged.status is ForkStatus.MERGED and merged.draft is None and merged.summary_edited_by == "U2"


def test_only_the_live_draft_of_an_open_fork_can_be_approved(store):
    fork = open_fork(store)
    assert store.reviews.approve(fork.id, 0, "x", "U1", False) is False  # no draft at all
    number = drafted(store, fork)
    assert store.reviews.approve(fork.id, number + 1, "x", "U1", False) is False
    assert store.merges.abandon(fork.id) is True
    assert store.sessions.fork(fork.id).draft is None
    assert store.reviews.approve(fork.id, number, "x", "U1", False) is False
    assert store.reviews.begin_draft(fork.id, number, "owner", 60) == 0
