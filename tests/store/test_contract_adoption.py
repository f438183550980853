"""The store contract for adopted threads, on the in-memory store, SQLite and PostgreSQL: a thread
becomes a fork once however many adopt it at once, numbered in the channel's one sequence, pointing
at the parent's last turn before its root, leased to its adopter, with seq 1 kept for its earlier
messages."""
from bot.domain.model import Channel, ContextSize, Mode, Role, TurnStatus

from .test_contract import race
from bot.app import made
from bot.services.queue import Queue

GENERAL = Channel("T1", "C1")


def adopt(store, root_ts="100.5", holder="adopter", owner="U1"):
    return store.adoptions.adopt_thread(GENERAL, root_ts, owner, holder, 60)


def test_a_thread_is_adopted_once_however_many_adopt_it_at_once(store):
    store.sessions.create_fork(GENERAL, "U1", Mode.INHERIT, "an ordinary fork")  # #1
    results = race(8, lambda: adopt(store))
    assert sum(r.new for r in results) == 1
    assert len({r.fork.id for r in results}) == 1
    [fork] = {r.fork.id: r.fork for r in results}.values()
    assert (fork.number, fork.adopted, fork.mode, fork.root_ts, fork.owner_id) == (2, True, Mode.INHERIT, "100.5", "U1")
    assert store.sessions.fork_by_message(GENERAL, "100.5").id == fork.id
    assert store.sessions.create_fork(GENERAL, "U1", Mode.FRESH, "").number == 3  # the losers took no number
    assert adopt(store).new is False


def test_two_threads_adopted_at_once_get_numbers_of_the_one_sequence(store):
    roots = [f"200.{n}" for n in range(1, 7)]
    results = race(6, lambda: adopt(store, root_ts=roots.pop()))
    assert all(r.new for r in results)
    assert sorted(r.fork.number for r in results) == [1, 2, 3, 4, 5, 6]


def test_an_adopted_fork_points_at_the_parents_last_turn_posted_strictly_before_its_root(store):
    parent = store.sessions.parent_id(GENERAL)
    for text, ts in (("one", "100.1"), ("two", "100.2"), ("the root itself", "100.5"), ("later", "100.7")):
        store.turns.append_turn(parent, Role.USER, text, TurnStatus.ANSWERED, author_id="U1", slack_ts=ts)
    fork = adopt(store).fork
    assert fork.fork_point_seq == 2 and fork.opened_at_seq == 4
    assert [t.text for t in store.turns.turns(parent, upto_seq=fork.fork_point_seq)] == ["one", "two"]
    first = adopt(store, root_ts="99.9").fork
    assert first.fork_point_seq is None  # nothing was said before its root


def test_the_adopter_holds_the_forks_lease_until_it_releases_it(store):
    fork = adopt(store, holder="adopter").fork
    waiting = made(Queue, store).submit(fork.id, "me too", author_id="U2", author_name="Bo", slack_ts="100.6",
                                      channel=GENERAL, claim="msg:100.6", owner="someone else", lease_seconds=60)
    assert waiting.stored and waiting.batch is None  # kept, not answered: the adopter holds the lease
    store.leases.release(fork.id, "adopter")
    assert store.leases.lease(fork.id, "someone else", 60)


def test_completing_the_adoption_puts_the_threads_messages_first_whatever_arrived_meanwhile(store):
    fork = adopt(store).fork
    store.turns.append_turn(fork.id, Role.USER, "arrived meanwhile", TurnStatus.ANSWERED, author_id="U2",
                            slack_ts="100.8", channel=GENERAL)
    assert [t.seq for t in store.turns.turns(fork.id)] == [2]  # read (and cached) before the completion
    store.adoptions.complete_adoption(fork.id, "should we move?", ContextSize(2, 40), "[bob] should we move?",
                                       "earlier in this thread", ["100.5", "100.6"])
    opening, meanwhile = store.turns.turns(fork.id)
    assert (opening.seq, opening.role, opening.status, opening.text) == (1, Role.USER, TurnStatus.ANSWERED,
                                                                         "[bob] should we move?")
    assert (opening.author_id, opening.author_name) == (None, "earlier in this thread")
    assert meanwhile.text == "arrived meanwhile"
    done = store.sessions.fork(fork.id)
    assert (done.topic, done.inherited) == ("should we move?", ContextSize(2, 40))
    assert store.sessions.fork_by_message(GENERAL, "100.6").id == fork.id  # ✅ on any earlier message merges it


def test_an_adoption_without_a_transcript_keeps_no_turn(store):
    fork = adopt(store).fork
    store.adoptions.complete_adoption(fork.id, "", ContextSize(0, 0), None, "earlier in this thread", [])
    assert store.turns.turns(fork.id) == []
    assert store.views.stats(fork.id).turns == 0
