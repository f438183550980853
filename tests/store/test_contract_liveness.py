"""The store contract, continued: the durable inbox, day-long claims against permanent markers,
heartbeat renewals, handing claims back, and bounded attempts (memory, SQLite, PostgreSQL alike)."""
from concurrent.futures import ThreadPoolExecutor
from datetime import timedelta

from bot.domain.model import Channel, ForkStatus, Mode, TurnStatus, Usage
from bot.services.ports import MAX_ATTEMPTS
from ..merges import begin_merge
from bot.app import made
from bot.services.queue import Queue


def race(count, call):
    with ThreadPoolExecutor(max_workers=count) as pool:
        return list(pool.map(lambda _: call(), range(count)))


def submit(store, session_id, text, owner):
    return made(Queue, store).submit(session_id, text, author_id="U1", author_name="Ann", slack_ts=None,
                                   channel=None, claim=None, owner=owner, lease_seconds=30)


def test_a_delivery_is_kept_once_and_a_redelivery_is_turned_away_for_a_day(store, clock):
    assert sorted(race(5, lambda: store.inbox.keep("Ev1", '{"n": 1}', 30))) == [False] * 4 + [True]
    store.inbox.done("Ev1")
    clock.advance(hours=23)
    assert store.inbox.prune(clock() - timedelta(days=1)) == 0
    assert store.inbox.keep("Ev1", '{"n": 1}', 30) is False
    clock.advance(hours=2)
    assert store.inbox.prune(clock() - timedelta(days=1)) == 1
    assert store.inbox.keep("Ev1", '{"n": 1}', 30) is True


def test_a_kept_delivery_whose_claim_expires_unfinished_is_taken_by_one_sweeper(store, clock):
    store.inbox.keep("Ev1", "payload one", 30)
    store.inbox.keep("Ev2", "payload two", 30)
    store.inbox.done("Ev2")
    assert store.inbox.due() == []
    clock.advance(seconds=20)
    store.inbox.renew(["Ev1"], 30)  # its process is alive and working
    clock.advance(seconds=20)
    assert store.inbox.due() == []
    clock.advance(seconds=11)
    assert store.inbox.due() == ["Ev1"]
    taken = [k for k in race(4, lambda: store.inbox.take("Ev1", 30)) if k]
    assert [(k.key, k.payload, k.attempts) for k in taken] == [("Ev1", "payload one", 2)]
    store.inbox.release(["Ev1"])  # shutting down: hand it back at once
    assert store.inbox.due() == ["Ev1"]


def test_claims_are_pruned_after_a_day_but_markers_are_forever(store, clock):
    assert store.claims.claim("msg:C1:1.1") and store.claims.mark("budget:7:1000")
    assert not store.claims.claim("msg:C1:1.1") and not store.claims.mark("budget:7:1000")
    clock.advance(days=1, seconds=1)
    assert store.claims.prune(clock() - timedelta(days=1)) == 1
    assert store.claims.claim("msg:C1:1.1") and not store.claims.mark("budget:7:1000")


def test_a_heartbeat_keeps_a_lease_alive_and_handing_it_back_frees_it_at_once(store, clock):
    parent = store.sessions.parent_id(Channel("T1", "C1"))
    submit(store, parent, "question", "alive")
    for _ in range(4):
        clock.advance(seconds=20)
        store.leases.renew_leases(["alive", "someone else"], 30)
        assert store.leases.lease(parent, "taker", 30) is False
    store.leases.release_leases(["alive"])
    assert store.leases.lease(parent, "taker", 30)


def test_a_holder_that_lost_its_lease_records_nothing(store, clock):
    parent = store.sessions.parent_id(Channel("T1", "C1"))
    batch = submit(store, parent, "question", "slow").batch
    clock.advance(seconds=31)
    assert store.leases.lease(parent, "taker", 30)  # taken over
    assert made(Queue, store).record(batch.reply, batch.pending, "late answer", Usage(1, 1), [], None, "slow", 30) \
        is None
    assert [(t.text, t.status) for t in store.turns.turns(parent)] == [
        ("question", TurnStatus.PENDING), ("", TurnStatus.STREAMING)]


def test_a_turn_begun_three_times_without_a_recorded_answer_is_given_up(store, clock):
    parent = store.sessions.parent_id(Channel("T1", "C1"))
    submit(store, parent, "poison", "first")
    for attempt in range(2, MAX_ATTEMPTS + 1):
        clock.advance(seconds=31)
        store.upkeep.interrupt_streaming(parent)
        assert store.leases.lease(parent, f"worker {attempt}", 30)
        assert [t.text for t in made(Queue, store).next(parent, f"worker {attempt}", 30).pending] == ["poison"]
    clock.advance(seconds=31)
    store.upkeep.interrupt_streaming(parent)
    assert store.leases.lease(parent, "last", 30)
    final = made(Queue, store).next(parent, "last", 30)
    assert final.pending == [] and final.reply is None and [t.text for t in final.given_up] == ["poison"]
    assert store.turns.turns(parent)[0].status is TurnStatus.FAILED
    assert store.leases.lease(parent, "anyone", 30)  # released with nothing left to answer


def test_a_merge_is_renewed_while_alive_handed_back_on_shutdown_and_given_up_after_three_takeovers(store, clock):
    fork = store.sessions.create_fork(Channel("T1", "C1"), "U1", Mode.FRESH, "")
    assert begin_merge(store, fork.id, "U1", "merger", 30)
    clock.advance(seconds=20)
    store.merges.renew_merges(["merger"], 30)
    clock.advance(seconds=20)
    assert store.merges.stuck_merges() == []
    store.merges.release_merges(["merger"])
    assert [f.id for f in store.merges.stuck_merges()] == [fork.id]
    attempts = []
    for n in range(MAX_ATTEMPTS):
        attempts.append(store.merges.take_merge(fork.id, f"sweeper {n}", 30))
        clock.advance(seconds=31)
    assert attempts == [2, 3, 4]
    store.merges.give_up_merge(fork.id)
    reopened = store.sessions.fork(fork.id)
    assert reopened.status is ForkStatus.OPEN and reopened.merged_by is None
    assert store.merges.stuck_merges() == [] and begin_merge(store, fork.id, "U2", "again", 30)
