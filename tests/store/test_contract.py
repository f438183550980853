"""The store contract, run on the in-memory store, on SQLite and on the local PostgreSQL server:
every once-only transition holds under concurrent callers (threads with their own connections, as
replicas would), and the three implementations answer alike."""
import time
import uuid
from concurrent.futures import ThreadPoolExecutor
from datetime import timedelta

from bot.domain.merge import MergedSummary
from bot.domain.model import Channel, ContextSize, ForkStatus, Mode, Role, TurnStatus, Usage
from ..merges import begin_merge
from bot.app import made
from bot.services.queue import Queue
from .use_cases import merge_in


def race(count, call):
    with ThreadPoolExecutor(max_workers=count) as pool:
        return list(pool.map(lambda _: call(), range(count)))


def test_a_key_is_claimed_by_exactly_one_of_many_concurrent_callers(store):
    assert sorted(race(8, lambda: store.claims.claim("event:Ev1"))) == [False] * 7 + [True]
    assert store.claims.claim("event:Ev2") is True


def test_each_channel_has_one_parent_however_many_ask_at_once(store):
    assert len(set(race(8, lambda: store.sessions.parent_id(Channel("T1", "C1"))))) == 1
    assert store.sessions.parent_id(Channel("T1", "C2")) != store.sessions.parent_id(Channel("T1", "C1"))


def test_fork_numbers_are_unique_and_dense_per_channel(store):
    forks = race(6, lambda: store.sessions.create_fork(Channel("T1", "C1"), "U1", Mode.INHERIT, "t"))
    assert sorted(f.number for f in forks) == [1, 2, 3, 4, 5, 6]
    assert store.sessions.create_fork(Channel("T1", "C2"), "U1", Mode.FRESH, "").number == 1


def test_two_workspaces_sharing_a_channel_id_never_see_each_others_sessions(store):
    # a Slack Connect channel has one id in every workspace that shares it
    ours, theirs = Channel("T1", "C1"), Channel("T2", "C1")
    assert store.sessions.parent_id(ours) != store.sessions.parent_id(theirs)
    mine = store.sessions.create_fork(ours, "U1", Mode.FRESH, "ours")
    other = store.sessions.create_fork(theirs, "U1", Mode.FRESH, "theirs")
    assert (mine.number, other.number) == (1, 1)
    store.sessions.set_root(mine.id, "100.1", ContextSize(0, 0))
    store.sessions.set_root(other.id, "100.1", ContextSize(0, 0))  # the same message ts in both
    assert store.sessions.fork_by_message(ours, "100.1").id == mine.id
    assert store.sessions.fork_by_message(theirs, "100.1").id == other.id
    assert store.sessions.fork_by_number(theirs, 1).topic == "theirs"
    assert [f.id for f in store.sessions.forks_in(ours, ForkStatus.OPEN)] == [mine.id]
    assert [f.id for f in store.sessions.open_forks_of("T2", "U1")] == [other.id]
    store.turns.append_turn(other.id, Role.USER, "q", TurnStatus.FAILED, author_id="U1", slack_ts="100.2",
                            channel=theirs)
    assert store.edits.retry_turn(ours, "100.2") is None
    assert store.edits.edit_turn(ours, "100.2", "U1", "x") is False
    assert store.edits.retry_turn(theirs, "100.2") == other.id
    store.turns.append_turn(mine.id, Role.ASSISTANT, "a", TurnStatus.COMPLETE, usage=Usage(10, 0))
    assert store.feedback.record(ours, "100.1", "U1", "good") and store.feedback.record(theirs, "100.1", "U1", "bad")
    ours_economy = store.views.channel_economy(ours)
    assert (ours_economy.burned, ours_economy.good, ours_economy.bad) == (10, 1, 0)
    assert store.views.channel_economy(theirs).bad == 1


def test_an_inherit_fork_points_at_the_parents_last_turn_and_a_fresh_fork_at_nothing(store):
    parent = store.sessions.parent_id(Channel("T1", "C1"))
    store.turns.append_turn(parent, Role.USER, "one", TurnStatus.ANSWERED, author_id="U1")
    store.turns.append_turn(parent, Role.ASSISTANT, "two", TurnStatus.COMPLETE)
    inherit = store.sessions.create_fork(Channel("T1", "C1"), "U1", Mode.INHERIT, "")
    fresh = store.sessions.create_fork(Channel("T1", "C1"), "U1", Mode.FRESH, "")
    store.turns.append_turn(parent, Role.USER, "three", TurnStatus.PENDING, author_id="U1")
    assert inherit.fork_point_seq == 2 and fresh.fork_point_seq is None
    assert [t.text for t in store.turns.turns(parent, upto_seq=inherit.fork_point_seq)] == ["one", "two"]


def test_a_merge_begins_once_and_completes_by_appending_one_summary_to_the_parent(store):
    fork = store.sessions.create_fork(Channel("T1", "C1"), "U1", Mode.INHERIT, "")
    assert sorted(race(6, lambda: begin_merge(store, fork.id, "U2", "worker", 60))) == [False] * 5 + [True]
    merge_in(store, store.sessions.fork(fork.id), "[Merged fork #1] the summary", "the summary",
                                Usage(10, 20, 5, 1))
    assert store.sessions.fork(fork.id).status is ForkStatus.MERGED
    assert store.sessions.fork(fork.id).merged_by == "U2"
    assert (store.merges.summary_of(fork.id), store.views.stats(fork.id).summary_tokens) == ("the summary", 20)
    [summary] = store.turns.turns(fork.parent_id)
    assert (summary.role, summary.text, summary.usage.output_tokens) == (
        Role.SUMMARY, "[Merged fork #1] the summary", 20)
    assert begin_merge(store, fork.id, "U3", "worker", 60) is False and store.merges.abandon(fork.id) is False


def test_a_cancelled_merge_reopens_the_fork(store):
    fork = store.sessions.create_fork(Channel("T1", "C1"), "U1", Mode.INHERIT, "")
    assert begin_merge(store, fork.id, "U1", "worker", 60)
    assert store.merges.cancel_merge(fork.id)
    assert store.sessions.fork(fork.id).status is ForkStatus.OPEN


def test_turn_seqs_are_dense_under_concurrent_appends(store):
    parent = store.sessions.parent_id(Channel("T1", "C1"))
    race(10, lambda: store.turns.append_turn(parent, Role.USER, "x", TurnStatus.PENDING, author_id="U1"))
    assert [t.seq for t in store.turns.turns(parent)] == list(range(1, 11))


def test_usage_is_stored_per_turn(store):
    parent = store.sessions.parent_id(Channel("T1", "C1"))
    store.turns.append_turn(parent, Role.ASSISTANT, "a", TurnStatus.COMPLETE, usage=Usage(100, 20, 3000, 40))
    assert store.turns.turns(parent)[0].usage == Usage(100, 20, 3000, 40)


def test_a_session_lease_has_one_holder_until_released_or_expired(store, clock):
    parent = store.sessions.parent_id(Channel("T1", "C1"))
    owners = [uuid.uuid4().hex for _ in range(5)]
    with ThreadPoolExecutor(max_workers=5) as pool:
        won = dict(zip(owners, pool.map(lambda owner: store.leases.lease(parent, owner, 60), owners)))
    [holder] = [owner for owner, took in won.items() if took]
    store.leases.release(parent, "someone else")  # only the holder releases
    assert store.leases.lease(parent, "next", 60) is False
    store.leases.release(parent, holder)
    assert store.leases.lease(parent, "next", 60)
    clock.advance(seconds=61)
    assert store.leases.lease(parent, "after expiry", 60)


def test_messages_map_to_their_fork_for_reactions(store):
    fork = store.sessions.create_fork(Channel("T1", "C1"), "U1", Mode.INHERIT, "")
    store.sessions.set_root(fork.id, "100.1", ContextSize(0, 0))
    store.turns.append_turn(fork.id, Role.USER, "hi", TurnStatus.PENDING, author_id="U1", slack_ts="100.2",
                            channel=Channel("T1", "C1"))
    assert store.sessions.fork_by_message(Channel("T1", "C1"), "100.1").id == fork.id
    assert store.sessions.fork_by_message(Channel("T1", "C1"), "100.2").id == fork.id
    assert store.sessions.fork_by_message(Channel("T1", "C2"), "100.2") is None


def test_a_stuck_merge_is_reclaimed_by_exactly_one_sweeper_once_its_lease_expired(store, clock):
    fork = store.sessions.create_fork(Channel("T1", "C1"), "U1", Mode.INHERIT, "")
    assert begin_merge(store, fork.id, "U1", "worker", 60)
    assert store.merges.stuck_merges() == [] and store.merges.take_merge(fork.id, "sweeper", 60) == 0
    clock.advance(seconds=61)
    assert [f.id for f in store.merges.stuck_merges()] == [fork.id]
    assert sorted(race(4, lambda: store.merges.take_merge(fork.id, "sweeper", 60))) == [0, 0, 0, 2]


def test_a_reminder_is_claimed_once_and_only_for_a_fork_still_idle(store):
    fork = store.sessions.create_fork(Channel("T1", "C1"), "U1", Mode.INHERIT, "")
    later = store.clock() + timedelta(hours=1)
    assert store.upkeep.claim_reminder(fork.id, idle_before=store.clock() - timedelta(hours=1)) is False
    assert sorted(race(4, lambda: store.upkeep.claim_reminder(fork.id, idle_before=later))) == [False] * 3 + [True]


def submit(store, session_id, text, owner, claim=None):
    return made(Queue, store).submit(session_id, text, author_id="U1", author_name="Ann", slack_ts=None,
                                   channel=None, claim=claim, owner=owner, lease_seconds=60)


def test_submitting_a_turn_leases_the_session_for_the_first_submitter_only(store):
    parent = store.sessions.parent_id(Channel("T1", "C1"))
    first = submit(store, parent, "one", "A", claim="msg:C1:1")
    assert first.stored and [t.text for t in first.batch.pending] == ["one"]
    second = submit(store, parent, "two", "B", claim="msg:C1:2")
    assert second.stored and second.batch is None  # A answers it
    assert not submit(store, parent, "one again", "C", claim="msg:C1:1").stored  # a duplicate
    assert [(t.text, t.status) for t in store.turns.turns(parent)] == [
        ("one", TurnStatus.PENDING), ("", TurnStatus.STREAMING), ("two", TurnStatus.PENDING)]


def test_the_lease_holder_gets_every_waiting_turn_with_the_replys_place_reserved_then_releases(store):
    parent = store.sessions.parent_id(Channel("T1", "C1"))
    first = submit(store, parent, "one", "A").batch
    assert (first.reply.seq, first.reply.status) == (2, TurnStatus.STREAMING)
    assert [t.seq for t in first.history] == [1, 2]
    submit(store, parent, "two", "B")
    submit(store, parent, "three", "C")
    assert made(Queue, store).next(parent, "B", 60) is None  # not the holder
    batch = made(Queue, store).record(first.reply, first.pending, "answer", Usage(1, 1), [], None, "A", 60)
    assert [t.text for t in batch.pending] == ["two", "three"] and batch.reply.seq == 5
    assert made(Queue, store).record(batch.reply, batch.pending, "answer", Usage(1, 1), [], None, "A", 60) is None
    assert made(Queue, store).next(parent, "A", 60) is None  # nothing waited: released
    assert submit(store, parent, "four", "B").batch is not None


def test_a_closed_forks_waiting_turns_fail_instead_of_being_answered(store):
    fork = store.sessions.create_fork(Channel("T1", "C1"), "U1", Mode.FRESH, "")
    assert store.merges.abandon(fork.id)
    assert submit(store, fork.id, "hello", "A").batch is None
    assert [t.status for t in store.turns.turns(fork.id)] == [TurnStatus.FAILED]
    assert store.leases.lease(fork.id, "B", 60)  # the lease was released


def test_no_turn_is_stranded_when_a_submit_races_the_lease_holders_release(store):
    """A turn submitted while the holder finds nothing more and releases is either seen by the
    holder or gets the lease itself: every turn is answered by someone, round after round."""
    parent = store.sessions.parent_id(Channel("T1", "C1"))
    answered: list[str] = []

    def answer_all(owner, batch=None):
        batch = batch or made(Queue, store).next(parent, owner, 60)
        while batch is not None:
            answered.extend(t.text for t in batch.pending)
            batch = made(Queue, store).record(batch.reply, batch.pending, "ok", Usage(1, 1), [], None, owner, 60)

    def user(name, delay):
        time.sleep(delay)  # arrive at a different moment of the holder's work each round
        if (batch := submit(store, parent, name, name).batch) is not None:
            answer_all(name, batch)

    with ThreadPoolExecutor(max_workers=2) as pool:
        for n in range(60):
            first = submit(store, parent, f"first {n}", f"holder {n}").batch
            assert first is not None
            list(pool.map(lambda run: run(), [lambda: answer_all(f"holder {n}", first),
                                              lambda: user(f"second {n}", n % 12 / 2000)]))
            assert not [t.text for t in store.turns.turns(parent) if t.status is TurnStatus.PENDING]
    assert len(answered) == 120




def test_a_fork_of_a_fork_is_numbered_in_the_channels_sequence_and_points_into_its_parent_fork(store):
    here = Channel("T1", "C1")
    parent = store.sessions.parent_id(here)
    store.turns.append_turn(parent, Role.USER, "channel", TurnStatus.ANSWERED, author_id="U1")
    top = store.sessions.create_fork(here, "U1", Mode.INHERIT, "top")
    store.sessions.set_root(top.id, "10.1", ContextSize(1, 10))
    top = store.sessions.fork(top.id)
    store.turns.append_turn(top.id, Role.USER, "in top", TurnStatus.ANSWERED, author_id="U1", slack_ts="11.1",
                            channel=here)
    store.turns.append_turn(top.id, Role.ASSISTANT, "answer", TurnStatus.COMPLETE, slack_ts="12.1", channel=here)
    sibling = store.sessions.create_fork(here, "U2", Mode.FRESH, "sibling")
    child = store.sessions.create_fork(here, "U2", Mode.INHERIT, "child", parent=top)
    early = store.sessions.create_fork(here, "U2", Mode.INHERIT, "", origin_ts="11.5", parent=top)
    assert (sibling.number, child.number, early.number) == (2, 3, 4)
    assert (child.parent_id, child.depth, child.parent_number, child.parent_root_ts) == (top.id, 2, 1, "10.1")
    assert (child.fork_point_seq, early.fork_point_seq, child.opened_at_seq) == (2, 1, 2)
    assert (top.depth, top.parent_id, top.opened_at_seq, sibling.opened_at_seq) == (1, parent, 1, 1)
    assert [f.id for f in store.sessions.children_of(top.id)] == [child.id, early.id]
    store.merges.abandon(early.id)
    assert [f.id for f in store.sessions.children_of(top.id)] == [child.id]


def test_summaries_merged_after_a_seq_come_back_with_their_fork_numbers(store):
    here = Channel("T1", "C1")
    parent = store.sessions.parent_id(here)
    store.turns.append_turn(parent, Role.USER, "start", TurnStatus.ANSWERED, author_id="U1")
    first, second = (store.sessions.create_fork(here, "U1", Mode.INHERIT, t) for t in ("a", "b"))
    for fork in (first, second):
        store.turns.append_turn(fork.id, Role.USER, "q", TurnStatus.ANSWERED, author_id="U1")
        begin_merge(store, fork.id, "U1", "w", 60)
        merge_in(store, store.sessions.fork(fork.id), f"[Merged fork #{fork.number}] s", "s", Usage())
    assert store.merges.summaries_since(parent, 1) == [MergedSummary(1, "[Merged fork #1] s"),
                                                       MergedSummary(2, "[Merged fork #2] s")]
    assert store.merges.summaries_since(parent, 2) == [MergedSummary(2, "[Merged fork #2] s")]
    assert store.merges.summaries_since(parent, 3) == []
