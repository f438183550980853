"""The store contract for the one summary request per fork (issue 19), memory, SQLite and PostgreSQL alike:
whether it merges or drafts, the summary is claimed before Claude is asked, and while one claim is live
no other caller — another replica's expiry, a person's ✅ — can take the fork for a summary of its own."""
from datetime import timedelta

from bot.domain.model import ForkStatus, Usage

from .test_contract import race
from .test_contract_reviews import open_fork
from ..merges import begin_merge
from bot.app import made
from bot.services.queue import Queue


def test_an_idle_forks_expiry_merge_is_claimed_by_one_of_many_sweepers(store, clock):
    fork = open_fork(store)
    clock.advance(days=8)
    idle_before = clock() - timedelta(days=7)
    won = race(6, lambda: begin_merge(store, fork.id, "threadfork:expiry", "sweeper", 30, idle_before))
    assert sorted(won) == [False] * 5 + [True]
    assert store.sessions.fork(fork.id).status is ForkStatus.MERGING
    assert store.reviews.begin_draft(fork.id, 0, "another", 30) == 0  # nor can it be drafted meanwhile


def test_a_merge_waits_while_a_draft_of_the_summary_is_being_written_and_not_after_its_claim_lapsed(store, clock):
    fork = open_fork(store)
    assert store.reviews.begin_draft(fork.id, 0, "drafter", 30) == 1
    assert begin_merge(store, fork.id, "U2", "merger", 30) is False
    assert store.sessions.fork(fork.id).status is ForkStatus.OPEN
    clock.advance(seconds=31)  # the drafter died: its claim lapsed
    assert begin_merge(store, fork.id, "U2", "merger", 30) is True


def test_a_merge_after_a_draft_was_recorded_or_released_is_claimed_at_once(store):
    fork = open_fork(store)
    assert store.reviews.begin_draft(fork.id, 0, "drafter", 30) == 1
    store.reviews.release_draft(fork.id, "drafter")
    assert begin_merge(store, fork.id, "U2", "merger", 30) is True


def test_a_merge_asked_for_while_claude_answers_waits_for_the_answer_to_be_recorded_then_is_taken_once(store, clock):
    fork = open_fork(store)
    submitted = made(Queue, store).submit(fork.id, "one more question", author_id="U1", author_name="Ann",
                                        slack_ts=None, channel=None, claim=None, owner="answerer", lease_seconds=30)
    assert submitted.batch is not None  # Claude is answering: the lease is held, the reply streams
    assert store.merges.request_merge(fork.id, "U2", "focus on risks")
    waiting = store.sessions.fork(fork.id)
    assert waiting.merge_waiting and waiting.merge_guidance == "focus on risks"
    assert store.merges.request_merge(fork.id, "U3") is False  # several presses, one merge
    assert store.merges.take_merge(fork.id, "merger", 30) == 0 and store.merges.stuck_merges() == []
    clock.advance(seconds=31)  # the answerer died: its lease lapsed, its reply still streaming
    assert store.merges.take_merge(fork.id, "merger", 30) == 0 and store.merges.stuck_merges() == []
    store.upkeep.interrupt_streaming(fork.id)  # the sweep takes the answer over and answers the turn again
    retried = made(Queue, store).next(fork.id, "sweeper", 30) if store.leases.lease(fork.id, "sweeper", 30) else None
    assert retried is not None and [t.text for t in retried.pending] == ["one more question"]
    made(Queue, store).record(retried.reply, retried.pending, "the answer", Usage(10, 5), [], None, "sweeper", 30)
    assert [f.id for f in store.merges.stuck_merges()] == [fork.id]  # recorded, the lease let go: its turn now
    assert sorted(race(4, lambda: store.merges.take_merge(fork.id, "merger", 30))) == [0, 0, 0, 1]
    taken = store.sessions.fork(fork.id)
    assert taken.status is ForkStatus.MERGING and not taken.merge_waiting and taken.merged_by == "U2"
