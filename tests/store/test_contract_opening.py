"""The store contract for opening a fork with `/fork` (memory, SQLite, PostgreSQL alike): the fork is made leased to
its opener with its topic as its first turn, waiting, in one write — so a message written in its thread before its
root's ts is recorded queues behind the topic — and while its root's ts is unknown and its opener alive, a thread
message's read of its channel says a fork is being opened there."""
from bot.domain.model import Channel, ContextSize, Mode, TurnStatus
from bot.services.ports import Opener
from bot.app import made
from bot.services.queue import Queue

GENERAL = Channel("T1", "C1")


def opened(store, topic="should we move?", holder="opener", seconds=60.0):
    return store.sessions.create_fork(GENERAL, "U1", Mode.FRESH, topic,
                                      opener=Opener(holder, seconds, "U1", "Ann"))


def test_an_opened_fork_holds_its_topic_as_a_waiting_first_turn_leased_to_its_opener(store):
    fork = opened(store)
    waiting = made(Queue, store).submit(fork.id, "me too", author_id="U2", author_name="Bo", slack_ts="100.6",
                                      channel=GENERAL, claim="msg:100.6", owner="someone else", lease_seconds=60)
    assert waiting.stored and waiting.batch is None  # kept, not answered: the opener holds the lease
    batch = made(Queue, store).next(fork.id, "opener", 60)
    assert [(t.seq, t.text, t.author_id, t.author_name, t.status) for t in batch.pending] == [
        (1, "should we move?", "U1", "Ann", TurnStatus.PENDING), (2, "me too", "U2", "Bo", TurnStatus.PENDING)]


def test_an_opened_fork_without_a_topic_has_no_turn_and_its_opener_lets_go_when_nothing_waits(store):
    fork = opened(store, topic="")
    assert store.turns.turns(fork.id) == []
    assert made(Queue, store).next(fork.id, "opener", 60) is None  # nothing waits: the lease is let go
    assert store.leases.lease(fork.id, "someone else", 60)


def test_a_fork_is_being_opened_while_its_roots_ts_is_unknown_and_its_opener_alive(store, clock):
    assert store.spending.chosen(GENERAL, "100.5").opening is False
    fork = opened(store)
    assert store.spending.chosen(GENERAL, "100.5").opening is True  # any thread of the channel may be its
    assert store.spending.chosen(Channel("T1", "C2"), "100.5").opening is False  # another channel's is not
    assert store.spending.chosen(GENERAL).opening is False  # a top-level message asks nothing of it
    store.sessions.set_root(fork.id, "100.5", ContextSize(0, 0))
    root = store.spending.chosen(GENERAL, "100.5")
    assert root.fork.id == fork.id and root.opening is False
    assert store.spending.chosen(GENERAL, "200.1").opening is False  # recorded: nothing is being opened


def test_an_opening_whose_opener_died_or_let_go_is_not_waited_for(store, clock):
    opened(store, holder="dead", seconds=30)
    clock.advance(seconds=31)  # its heartbeat stopped: the lease lapsed
    assert store.spending.chosen(GENERAL, "100.5").opening is False
    opened(store, topic="", holder="quick")
    assert store.spending.chosen(GENERAL, "100.5").opening is True
    assert made(Queue, store).next(store.sessions.fork_by_number(GENERAL, 2).id, "quick", 60) is None  # let go
    assert store.spending.chosen(GENERAL, "100.5").opening is False
