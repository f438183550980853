"""The store contract, continued: edits, deletions, retries, failures and how turns come back
(on the in-memory store, SQLite and PostgreSQL alike)."""
from bot.domain.model import Channel, ContextSize, Mode, Role, TurnStatus, Usage
from bot.app import made
from bot.services.queue import Queue


def fork_with_root(store, channel="C1", mode=Mode.FRESH, owner="U1"):
    fork = store.sessions.create_fork(Channel("T1", channel), owner, mode, "topic")
    store.sessions.set_root(fork.id, f"{fork.id}00.1", ContextSize(0, 0))
    return store.sessions.fork(fork.id)


def submit(store, session_id, text, owner, ts=None, channel=None, author="U1"):
    return made(Queue, store).submit(session_id, text, author_id=author, author_name="Ann", slack_ts=ts,
                                   channel=Channel("T1", channel) if channel else None, claim=None, owner=owner,
                                   lease_seconds=60)


def test_settled_turns_come_back_as_the_same_objects_and_a_changed_turn_as_a_new_one(store):
    parent = store.sessions.parent_id(Channel("T1", "C1"))
    batch = submit(store, parent, "question", "A", ts="1.1").batch
    made(Queue, store).record(batch.reply, batch.pending, "answer", Usage(5, 5), ["2.1"], None, "A", 60)
    first, second = store.turns.turns(parent), store.turns.turns(parent)
    assert [t.text for t in first] == ["question", "answer"] and all(a is b for a, b in zip(first, second))
    assert store.edits.edit_turn(Channel("T1", "C1"), "1.1", "U1", "question, edited")
    edited = store.turns.turns(parent)
    assert edited[0].text == "question, edited" and edited[0] is not first[0]


def test_only_the_author_edits_a_turn_and_a_deleted_turn_leaves_the_history(store):
    parent = store.sessions.parent_id(Channel("T1", "C1"))
    store.turns.append_turn(parent, Role.USER, "mine", TurnStatus.ANSWERED, author_id="U1", slack_ts="1.1")
    store.turns.append_turn(parent, Role.USER, "other", TurnStatus.ANSWERED, author_id="U2", slack_ts="1.2")
    assert store.edits.edit_turn(Channel("T1", "C1"), "1.1", "U2", "hijacked") is False
    assert store.edits.edit_turn(Channel("T1", "C2"), "1.1", "U1", "wrong channel") is False
    assert store.edits.delete_turn(Channel("T1", "C1"), "1.2") is True
    assert [t.text for t in store.turns.turns(parent)] == ["mine"]


def test_a_failed_reply_leaves_the_context_and_its_turn_can_be_retried_once(store):
    fork = fork_with_root(store)
    batch = submit(store, fork.id, "question", "A", ts="3.1", channel="C1").batch
    assert made(Queue, store).abort(batch.reply, batch.pending, "A", 60) is None  # nothing else waits: released
    assert [(t.role, t.status) for t in store.turns.turns(fork.id)] == [
        (Role.USER, TurnStatus.FAILED), (Role.ASSISTANT, TurnStatus.ABORTED)]
    assert store.edits.retry_turn(Channel("T1", "C2"), "3.1") is None  # another channel's message
    assert store.edits.retry_turn(Channel("T1", "C1"), "3.1") == fork.id
    assert store.edits.retry_turn(Channel("T1", "C1"), "3.1") is None  # pending again, not failed
    assert store.leases.lease(fork.id, "B", 60)
    again = made(Queue, store).next(fork.id, "B", 60)
    assert [t.text for t in again.pending] == ["question"]


def test_a_reply_posted_in_a_fork_thread_maps_each_of_its_messages_to_the_fork(store):
    fork = fork_with_root(store)
    batch = submit(store, fork.id, "question", "A", ts="3.1", channel="C1").batch
    made(Queue, store).record(batch.reply, batch.pending, "long answer", Usage(1, 1), ["4.1", "4.2"], Channel("T1", "C1"),
                             "A", 60)
    assert {store.sessions.fork_by_message(Channel("T1", "C1"), ts).id for ts in ("3.1", "4.1", "4.2")} == {fork.id}
    reply = store.turns.turns(fork.id)[-1]
    assert (reply.text, reply.slack_ts, reply.status) == ("long answer", "4.1", TurnStatus.COMPLETE)


def test_a_fork_from_a_message_points_at_the_last_turn_posted_at_or_before_it(store):
    parent = store.sessions.parent_id(Channel("T1", "C1"))
    for n, ts in enumerate(["10.5", "11.0", "12.25"]):
        store.turns.append_turn(parent, Role.USER, f"m{n}", TurnStatus.ANSWERED, author_id="U1", slack_ts=ts)
    assert store.sessions.create_fork(Channel("T1", "C1"), "U1", Mode.INHERIT, "", origin_ts="11.5").fork_point_seq == 2
    here = Channel("T1", "C1")
    assert store.sessions.create_fork(here, "U1", Mode.INHERIT, "", origin_ts="9.0").fork_point_seq is None
    assert store.sessions.create_fork(here, "U1", Mode.FRESH, "", origin_ts="12.25").fork_point_seq is None


def test_a_users_forks_are_those_they_opened_or_wrote_in_most_recent_first(store):
    mine = fork_with_root(store, owner="U1")
    theirs = fork_with_root(store, owner="U2")
    elsewhere = fork_with_root(store, channel="C2", owner="U2")
    submit(store, theirs.id, "I chimed in", "X", author="U1")
    assert store.sessions.latest_open_fork_of(Channel("T1", "C1"), "U1").id == theirs.id
    assert [f.id for f in store.sessions.open_forks_of("T1", "U1")] == [theirs.id, mine.id]
    assert [f.id for f in store.sessions.open_forks_of("T1", "U2")] == [theirs.id, elsewhere.id]
    assert store.sessions.latest_open_fork_of(Channel("T1", "C1"), "U3") is None


def test_fork_counts_and_budgets_are_per_fork(store):
    first, second = fork_with_root(store), fork_with_root(store)
    store.merges.abandon(second.id)
    counts = store.sessions.fork_counts(Channel("T1", "C1"))
    assert {k.value: v for k, v in counts.items()} == {"open": 1, "abandoned": 1}
    store.budgets.raise_budget(first.id, 500)
    store.budgets.raise_budget(first.id, 500)
    assert (store.budgets.budget_extra(first.id), store.budgets.budget_extra(second.id)) == (1000, 0)
