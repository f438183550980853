"""The store contract for what the durable inbox keeps (issue 19), memory, SQLite and PostgreSQL alike: a
delivery's body (people's words) only until it is processed or given up; from then on its key alone, a
day, to turn Slack's retries away — whatever a forget, an uninstall's sweep or the retention deletes."""
from datetime import timedelta

import pytest
from sqlalchemy import select

from bot.domain.model import Channel
from bot.services.ports import MAX_ATTEMPTS
from bot.store.tables import inbox
from bot.app import made
from bot.services.queue import Queue

WORDS = '{"event": {"text": "my salary is 91k"}}'
HERE = Channel("T1", "C1")


def stored(store, key: str) -> tuple[bool, str | None]:
    """(is the key kept?, its body), read where the implementation keeps them."""
    if hasattr(store.inbox, "m"):  # the in-memory store
        row = store.inbox.m.inbox.get(key)
        return (row is not None, row.payload if row else None)
    with store.inbox.db.engine.connect() as conn:
        row = conn.execute(select(inbox.c.payload).where(inbox.c.key == key)).first()
    return (row is not None, row.payload if row else None)


def test_a_processed_delivery_keeps_its_key_and_not_its_body_and_still_turns_a_retry_away(store, clock):
    store.inbox.keep("event:Ev1", WORDS, 30)
    assert stored(store, "event:Ev1") == (True, WORDS)  # until it is processed, a crash can replay it
    store.inbox.done("event:Ev1")
    assert stored(store, "event:Ev1") == (True, None)
    assert store.inbox.keep("event:Ev1", WORDS, 30) is False  # Slack's retry: turned away
    assert stored(store, "event:Ev1") == (True, None)  # and its body is not kept again
    assert store.inbox.due() == [] and store.inbox.take("event:Ev1", 30) is None
    clock.advance(days=1, seconds=1)
    assert store.inbox.prune(clock() - timedelta(days=1)) == 1
    assert stored(store, "event:Ev1") == (False, None)


def test_a_delivery_given_up_after_its_attempts_keeps_no_body(store, clock):
    store.inbox.keep("event:Ev2", WORDS, 30)
    for _ in range(MAX_ATTEMPTS):
        clock.advance(seconds=31)  # its process died: the claim lapsed
        kept = store.inbox.take("event:Ev2", 30)
    assert kept.attempts == MAX_ATTEMPTS + 1 and kept.payload == WORDS  # the sweep reads it to tell its sender
    store.inbox.done("event:Ev2")  # given up
    assert stored(store, "event:Ev2") == (True, None)


@pytest.mark.parametrize("deletion", ["forget", "uninstall", "retention"])
def test_after_each_deletion_the_inbox_holds_no_processed_body_and_still_turns_retries_away(store, clock,
                                                                                            deletion):
    store.sessions.parent_id(HERE)
    store.inbox.keep("event:Ev3", WORDS, 30)
    store.inbox.done("event:Ev3")
    {"forget": lambda: store.erasure.forget_channel(HERE), "uninstall": lambda: store.erasure.forget_team("T1"),
     "retention": lambda: store.erasure.prune(clock() + timedelta(seconds=1))}[deletion]()
    assert stored(store, "event:Ev3") == (True, None)
    assert store.inbox.keep("event:Ev3", WORDS, 30) is False


def test_a_turn_stored_with_its_delivery_marks_it_done_in_the_same_write_and_a_duplicate_does_not(store):
    parent = store.sessions.parent_id(HERE)
    for key in ("event:EvMsg", "event:EvMention"):  # one message, delivered as `message` and `app_mention`
        store.inbox.keep(key, WORDS, 30)

    def submit(delivery):
        return made(Queue, store).submit(parent, "my salary is 91k", author_id="U1", author_name="Ann",
                                       slack_ts="5.1", channel=None, claim="msg:T1:C1:5.1", owner="p:1",
                                       lease_seconds=30, delivery=delivery)

    assert submit("event:EvMsg").stored
    assert stored(store, "event:EvMsg") == (True, None)  # done: the stored turn is what is kept now
    assert not submit("event:EvMention").stored  # the same message again: nothing stored, nothing done
    assert stored(store, "event:EvMention") == (True, WORDS)
    assert store.inbox.due() == []  # still claimed by its listener, which marks it done itself
