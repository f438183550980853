"""The store contract for Slack's agent platform, on the in-memory store, SQLite and PostgreSQL: Stop is
recorded once, only on an answer streaming, and kept with the answer it stopped; a private fork is made
once, forks its channel's conversation while it lives (and is numbered) in its owner's DM, and goes when
the channel is forgotten; the agent pane remembers what each person views."""
from bot.domain.model import Channel, ContextSize, ForkStatus, Mode, Role, TurnStatus, Usage

from .test_contract import race
from bot.domain.agent import in_order
from bot.app import made
from bot.services.queue import Queue

HERE, DM, OTHER_DM = Channel("T1", "C1"), Channel("T1", "D1"), Channel("T1", "D2")


def streaming(store, channel=HERE, text="tell me everything"):
    """A turn of the channel's conversation whose answer is being written: (its batch, the lease owner)."""
    parent = store.sessions.parent_id(channel)
    batch = made(Queue, store).submit(parent, text, author_id="U1", author_name="Ann", slack_ts=None, channel=None,
                                    claim=None, owner="A", lease_seconds=60).batch
    return batch


def test_a_stop_is_recorded_once_whoever_asks_at_once_and_names_the_reply(store):
    batch = streaming(store)
    won = race(8, lambda: store.stops.stop_in(batch.session.id, "U2"))
    assert [r for r in won if r is not None] == [batch.reply.id]
    assert store.stops.requested([batch.reply.id]) == {batch.reply.id: "U2"}
    assert store.stops.stop_reply(HERE, batch.reply.id, "U3") is False  # asked already: the first word stands


def test_a_stop_button_stops_only_an_answer_of_its_own_channel(store):
    batch = streaming(store)
    assert store.stops.stop_reply(Channel("T1", "C2"), batch.reply.id, "U2") is False
    assert store.stops.stop_reply(Channel("T2", "C1"), batch.reply.id, "U2") is False
    assert store.stops.requested([batch.reply.id]) == {}
    assert race(6, lambda: store.stops.stop_reply(HERE, batch.reply.id, "U2")).count(True) == 1


def test_stopping_an_answer_that_ended_changes_nothing(store):
    batch = streaming(store)
    made(Queue, store).record(batch.reply, batch.pending, "done", Usage(), [], None, "A", 60)
    assert store.stops.stop_in(batch.session.id, "U2") is None
    assert store.stops.stop_reply(HERE, batch.reply.id, "U2") is False
    assert store.stops.requested([batch.reply.id]) == {}
    assert store.stops.stop_in(store.sessions.parent_id(Channel("T1", "C9")), "U2") is None  # nothing streams


def test_a_stopped_answer_keeps_its_text_and_who_stopped_it(store):
    batch = streaming(store)
    store.stops.stop_in(batch.session.id, "U2")
    made(Queue, store).record(batch.reply, batch.pending, "the first half", Usage(10, 3), [], None, "A", 60,
                             stopped=True)
    answer = store.turns.turns(batch.session.id)[-1]
    assert (answer.text, answer.status, answer.stopped_by) == ("the first half", TurnStatus.STOPPED, "U2")
    assert store.turns.turns(batch.session.id)[-1] is answer  # settled: handed out as the same object


def test_an_answer_that_finished_despite_a_late_stop_is_complete_and_names_no_stopper(store):
    batch = streaming(store)
    store.stops.stop_in(batch.session.id, "U2")  # asked as the answer ended
    made(Queue, store).record(batch.reply, batch.pending, "all of it", Usage(), [], None, "A", 60)
    answer = store.turns.turns(batch.session.id)[-1]
    assert (answer.status, answer.stopped_by) == (TurnStatus.COMPLETE, None)


def private(store, root_ts="500.1", owner="U1", topic="what about pricing?", dm=DM):
    return store.private.open_private_fork(HERE, dm, root_ts, owner, topic)


def test_a_private_fork_is_made_once_however_many_deliveries_race(store):
    results = race(8, lambda: private(store))
    assert sum(r.new for r in results) == 1 and len({r.fork.id for r in results}) == 1
    fork = results[0].fork
    assert (fork.channel, fork.private_of, fork.home, fork.owner_id, fork.mode, fork.root_ts) == (
        DM, "C1", HERE, "U1", Mode.INHERIT, "500.1")
    assert fork.private and fork.root_is_theirs and fork.status is ForkStatus.OPEN
    assert store.sessions.fork_by_message(DM, "500.1").id == fork.id
    assert store.sessions.fork_by_message(HERE, "500.1") is None


def test_a_private_fork_forks_the_channels_conversation_as_it_is_now(store):
    parent = store.sessions.parent_id(HERE)
    for text in ("one", "two"):
        store.turns.append_turn(parent, Role.USER, text, TurnStatus.ANSWERED, author_id="U1")
    fork = private(store).fork
    assert fork.parent_id == parent and fork.fork_point_seq == 2
    store.turns.append_turn(parent, Role.USER, "later", TurnStatus.ANSWERED, author_id="U1")
    assert [t.text for t in store.turns.turns(fork.parent_id, upto_seq=fork.fork_point_seq)] == ["one", "two"]
    empty = store.private.open_private_fork(Channel("T1", "C7"), DM, "500.9", "U1", "")
    assert empty.fork.fork_point_seq is None  # nothing said there yet


def test_private_forks_are_numbered_in_their_dm_and_leave_the_channels_numbering_alone(store):
    assert [private(store, f"500.{n}").fork.number for n in (1, 2)] == [1, 2]
    assert private(store, "600.1", owner="U2", dm=OTHER_DM).fork.number == 1
    assert store.sessions.create_fork(HERE, "U3", Mode.INHERIT, "public").number == 1  # the channel's own #1
    assert store.sessions.forks_in(HERE, ForkStatus.OPEN)[0].topic == "public"
    assert store.sessions.fork_counts(HERE) == {ForkStatus.OPEN: 1}
    assert [f.number for f in store.sessions.forks_in(DM, ForkStatus.OPEN)] == [1, 2]


def test_a_channels_private_forks_are_listed_to_their_owner_only(store):
    mine = private(store).fork
    private(store, "600.1", owner="U2", dm=OTHER_DM)
    assert [f.id for f in store.private.private_forks_of(HERE, "U1")] == [mine.id]
    assert store.private.private_forks_of(Channel("T1", "C2"), "U1") == []
    store.merges.abandon(mine.id)
    assert store.private.private_forks_of(HERE, "U1") == []  # open ones only


def test_forgetting_a_channel_takes_its_private_forks_and_their_forks_with_it(store):
    fork = private(store).fork
    store.sessions.set_root(fork.id, "500.1", ContextSize(0, 0))
    store.turns.append_turn(fork.id, Role.USER, "secret", TurnStatus.ANSWERED, author_id="U1", slack_ts="500.2",
                            channel=DM)
    child = store.sessions.create_fork(DM, "U1", Mode.INHERIT, "deeper", parent=store.sessions.fork(fork.id))
    dm_talk = store.sessions.parent_id(DM)
    store.turns.append_turn(dm_talk, Role.USER, "just chatting", TurnStatus.ANSWERED, author_id="U1")
    store.erasure.forget_channel(HERE)
    assert store.sessions.fork(fork.id) is None and store.sessions.fork(child.id) is None
    assert store.turns.turns(fork.id) == [] and store.sessions.fork_by_message(DM, "500.2") is None
    assert [t.text for t in store.turns.turns(dm_talk)] == ["just chatting"]  # the DM's own talk stays


def test_the_pane_remembers_the_latest_channel_each_person_views(store):
    assert store.pane.viewing("T1", "U1") is None
    race(4, lambda: store.pane.viewed("T1", "U1", "C1", in_order("100.1")))
    store.pane.viewed("T1", "U2", "C2", in_order("100.2"))
    assert (store.pane.viewing("T1", "U1"), store.pane.viewing("T1", "U2")) == ("C1", "C2")
    store.pane.viewed("T1", "U1", None, in_order("100.3"))
    assert store.pane.viewing("T1", "U1") is None
    store.pane.viewed("T1", "U1", "C3", in_order("1000.4"))
    assert store.pane.viewing("T2", "U1") is None  # another workspace's person
    store.erasure.forget_team("T1")
    assert store.pane.viewing("T1", "U1") is None


def test_a_view_that_arrives_after_a_later_one_changes_nothing(store):
    store.pane.viewed("T1", "U1", "C1", in_order("1000.000200"))
    store.pane.viewed("T1", "U1", "C0", in_order("999.9"))  # earlier by the clock, though later as text
    assert store.pane.viewing("T1", "U1") == "C1"
    store.pane.viewed("T1", "U1", None, in_order("1000.000200"))  # the same moment: the last word counts
    assert store.pane.viewing("T1", "U1") is None
    moments = iter(range(6))

    def view():  # six views delivered at once, written in whatever order the threads run
        k = next(moments)
        store.pane.viewed("T1", "U1", f"C{k}", in_order(f"2000.{k}"))
    race(6, view)
    assert store.pane.viewing("T1", "U1") == "C5"
