"""The unit of work (`Store.work`), on every store: the saves made inside it stand or fall together, a unit opened
inside another is part of it, and a lone store call outside any unit is kept at once. The queue's use cases
(bot/services/queue.py) rely on it for a turn's claim, its delivery, the turn and the lease."""
import threading

import pytest

from bot.app import made
from bot.domain.model import Channel, Role, TurnStatus
from bot.services.queue import Queue

CHANNEL = Channel("T1", "C1")


class Refused(Exception):
    pass


def test_every_save_of_a_unit_is_undone_when_an_exception_leaves_it(store):
    parent = store.sessions.parent_id(CHANNEL)
    with pytest.raises(Refused), store.work():
        assert store.claims.claim("message:1")
        assert store.inbox.keep("delivery:1", "{}", 60)
        store.turns.append_turn(parent, Role.USER, "kept?", TurnStatus.ANSWERED)
        raise Refused
    assert store.claims.claim("message:1")  # never claimed
    assert store.inbox.keep("delivery:1", "{}", 60)  # never kept
    assert store.turns.turns(parent) == []


def test_a_unit_opened_inside_another_is_part_of_it(store):
    with pytest.raises(Refused), store.work():
        with store.work():
            assert store.claims.claim("inner")
        assert store.claims.claim("outer")
        raise Refused
    assert store.claims.claim("inner") and store.claims.claim("outer")


def test_a_lone_call_is_kept_at_once_and_a_unit_that_ends_well_keeps_everything(store):
    assert store.claims.claim("alone")
    with store.work():
        assert store.claims.claim("first")
        assert not store.claims.claim("first")  # its own save is seen inside the unit
        assert store.claims.claim("second")
    assert not store.claims.claim("alone")
    assert not store.claims.claim("first") and not store.claims.claim("second")


def test_a_claim_lost_inside_a_unit_leaves_the_unit_usable(store):
    """A duplicate inside a unit of work is an answer, not an error that spoils the transaction (PostgreSQL aborts
    a transaction at its first error)."""
    assert store.claims.claim("taken")
    with store.work():
        assert not store.claims.claim("taken")
        assert store.claims.claim("after it")
    assert not store.claims.claim("after it")


def test_a_unit_is_invisible_to_others_until_it_ends(store):
    """Another thread does not see a unit's saves before it is kept (and, on SQLite, waits to write)."""
    inside, seen = threading.Event(), []
    done = threading.Event()

    def other():
        inside.wait(10)
        seen.append(store.claims.claim("contested"))
        done.set()

    thread = threading.Thread(target=other)
    thread.start()
    with store.work():
        assert store.claims.claim("contested")
        inside.set()
        done.wait(0.3)  # the other caller cannot win meanwhile, whether it waits or not
    thread.join(30)
    assert seen == [False]


def test_a_turn_whose_session_is_missing_leaves_its_claim_and_its_delivery_as_they_were(store, clock):
    """Queue.submit: the claim, the delivery's done and the turn are one unit of work."""
    assert store.inbox.keep("delivery:9", "{}", 60)
    with pytest.raises(Exception):
        made(Queue, store).submit(987_654, "into nothing", author_id="U1", author_name=None, slack_ts="1.1",
                                  channel=None, claim="message:9", owner="A", lease_seconds=60, delivery="delivery:9")
    assert store.claims.claim("message:9")  # the claim went with the turn
    clock.advance(seconds=61)
    kept = store.inbox.take("delivery:9", 60)  # its keeper's claim lapsed: replayed, as it was never done
    assert kept is not None and kept.key == "delivery:9"


def test_a_summary_merged_twice_enters_its_parent_once_and_is_counted_once(store):
    """Merging.merge_in: the move, the summary turn and its cost are one unit of work; the second caller's move
    fails, and so nothing of its unit is kept."""
    from bot.domain.model import ForkStatus, Mode

    from bot.domain.spend import Spent

    from ..merges import begin_merge
    from .test_contract_spending import usage
    from .use_cases import merge_in

    fork = store.sessions.create_fork(CHANNEL, "U1", Mode.INHERIT, "")
    assert begin_merge(store, fork.id, "U2", "worker", 60)
    merging = store.sessions.fork(fork.id)
    merge_in(store, merging, "[Merged fork #1] s", "s", usage(1_000_000, 1_000))
    spent = store.spending.report(CHANNEL)
    with pytest.raises(RuntimeError, match="left the merging state"):
        merge_in(store, merging, "[Merged fork #1] again", "again", usage(1_000_000, 1_000))
    assert store.sessions.fork(fork.id).status is ForkStatus.MERGED
    assert [t.text for t in store.turns.turns(fork.parent_id)] == ["[Merged fork #1] s"]
    assert store.spending.report(CHANNEL) == spent and spent.month != Spent()  # counted once


def test_an_answers_connector_calls_are_counted_with_it_and_not_by_a_holder_that_lost_its_lease(store):
    """Queue.record: the answer and its MCP calls are one unit of work — whoever sees the answer recorded sees its
    calls counted; a holder taken over records neither."""
    from bot.domain.model import Usage

    queue = made(Queue, store)
    parent = store.sessions.parent_id(CHANNEL)
    batch = queue.submit(parent, "q", author_id="U1", author_name=None, slack_ts=None, channel=None, claim=None,
                         owner="A", lease_seconds=60).batch
    assert queue.record(batch.reply, batch.pending, "late", Usage(1, 1), [], None, "B", 60,
                        connector_calls={"tracker": 5}) is None  # not B's lease
    assert store.connector_use.in_channel(CHANNEL) == {}
    queue.record(batch.reply, batch.pending, "a", Usage(1, 1), [], None, "A", 60, connector_calls={"tracker": 2})
    assert store.connector_use.in_channel(CHANNEL) == {0: {"tracker": 2}}


def test_a_channel_conversations_batch_carries_its_memory_read_in_the_same_unit_and_a_forks_does_not(store):
    """The channel's memory (and its workspace's) comes with the batch's history, one transaction, not one of its
    own after it; a fork's is read from the top of its chain when its input is made (None here)."""
    from bot.domain.memory import WORKSPACE
    from bot.domain.model import Mode

    queue = made(Queue, store)
    store.memories.add(CHANNEL, "the launch is on 14 March", "U1", "Ada")
    store.memories.add(Channel("T1", WORKSPACE), "we ship on Tuesdays", "U2", None)
    store.memories.add(Channel("T1", "C2"), "another channel's fact", "U1", None)
    parent = store.sessions.parent_id(CHANNEL)
    batch = queue.submit(parent, "q", author_id="U1", author_name=None, slack_ts=None, channel=None, claim=None,
                         owner="A", lease_seconds=60).batch
    assert [e.text for e in batch.memory] == ["the launch is on 14 March", "we ship on Tuesdays"]
    fork = store.sessions.create_fork(CHANNEL, "U1", Mode.INHERIT, "t", parent=None)
    asked = queue.submit(fork.id, "q", author_id="U1", author_name=None, slack_ts=None, channel=CHANNEL, claim=None,
                         owner="A", lease_seconds=60).batch
    assert asked is not None and asked.memory is None
