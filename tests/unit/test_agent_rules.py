"""The agent platform's rules, without I/O: session titles, the channel in view, suggested prompts, how a
stopped answer and a private fork read to Claude (byte-stable), and the Stop switch a model call obeys."""
import threading
from concurrent.futures import ThreadPoolExecutor

from bot.domain.agent import MAX_PROMPTS, TITLE_LIMIT, first_message_title, in_view, session_title, suggested_prompts
from bot.domain.context import boundary_note, fork_input, parent_input
from bot.domain.merge import summary_turn_text
from bot.domain.model import Fork, ForkStatus, Mode, Role, Turn, TurnStatus
from bot.services.policy import Policy
from bot.services.liveness import Stopping, Switch

from ..fakes.clock import FakeClock
from ..fakes.memory import memory_store
from bot.app import made
from bot.services.queue import Queue


def fork(topic="", number=3, private_of=None, **fields) -> Fork:
    return Fork(id=7, channel_id="D1" if private_of else "C1", team_id="T1", number=number, parent_id=1,
                mode=Mode.INHERIT, topic=topic, owner_id="UALICE01", fork_point_seq=2, status=ForkStatus.OPEN,
                root_ts="10.1", private_of=private_of, **fields)


def test_a_forks_title_is_its_number_and_topic_on_one_line_within_two_hundred_characters():
    assert session_title(fork("pricing\n  for schools")) == "#3 pricing"
    assert session_title(fork()) == "Fork #3"
    long = session_title(fork("x" * 500))
    assert len(long) == TITLE_LIMIT and long.startswith("#3 xxx") and long.endswith("…")
    assert session_title(fork("what about pricing?", private_of="C1")) == "what about pricing?"


def test_a_topic_that_fits_a_title_is_all_in_it_even_when_the_number_does_not_fit_beside_it():
    for size in (196, 197, 198, 200):
        topic = "t" * (size - 1) + "!"
        title = session_title(fork(topic))
        assert topic in title and len(title) <= TITLE_LIMIT
    assert session_title(fork("t" * 197)) == "#3 " + "t" * 197


def test_only_a_fork_without_a_topic_is_renamed_by_its_first_message():
    assert first_message_title(fork(), "\n  should we   move?\nmore") == "#3 should we move?"
    assert first_message_title(fork("has one"), "anything") is None
    assert first_message_title(fork(), "   \n ") is None
    assert len(first_message_title(fork(), "y" * 999)) == TITLE_LIMIT


def test_the_channel_in_view_is_the_first_that_is_no_direct_message():
    assert in_view(["D0ALICE", "C1", "C2"]) == "C1"
    assert in_view(["G0PRIVATE"]) == "G0PRIVATE"
    assert in_view(["D1"]) is None and in_view([]) is None


def test_prompts_fit_the_channel_in_view_and_are_never_more_than_four():
    viewing = suggested_prompts("C1", "general")
    assert [p.title for p in viewing][:2] == ["Explore #general privately", "What has #general decided?"]
    assert "<#C1>" in viewing[0].message and "merged fork summaries" in viewing[1].message
    assert suggested_prompts("C1", None)[0].title == "Explore this channel privately"
    for prompts in (viewing, suggested_prompts(None, None)):
        assert 1 <= len(prompts) <= MAX_PROMPTS and all(p.title and p.message for p in prompts)


def test_a_stopped_answer_reads_as_what_it_said_and_who_stopped_it_the_same_bytes_every_time():
    turns = [Turn(1, 1, Role.USER, "tell me", "UALICE01", "alice", TurnStatus.ANSWERED),
             Turn(1, 2, Role.ASSISTANT, "The first half", status=TurnStatus.STOPPED, stopped_by="UBOB0001")]
    first, again = parent_input(turns), parent_input([*turns])
    assert first.blocks[-1].text == "The first half\n\n[<@UBOB0001> stopped this reply here; it is incomplete.]"
    assert [b.text for b in first.blocks] == [b.text for b in again.blocks]


def test_a_private_fork_reads_as_its_owners_private_session_of_the_channel():
    note = boundary_note(fork("pricing", private_of="C1"))
    assert "<#C1>" in note and "private side session of <@UALICE01>" in note and "about: pricing" in note
    built = fork_input(fork("pricing", private_of="C1"), [Turn(1, 1, Role.USER, "channel talk", "U2", "bob",
                                                                 TurnStatus.ANSWERED)], [])
    assert built.blocks[0].text.endswith("channel talk") and "private side session" in built.blocks[1].text


def test_a_private_forks_summary_enters_the_channel_without_its_topic_or_number():
    text = summary_turn_text(fork("secret topic", number=9, private_of="C1"), "UALICE01", "The outcome.")
    assert text.startswith("[Merged a private fork of <@UALICE01>") and text.endswith("\nThe outcome.")
    assert "secret topic" not in text and "#9" not in text


def test_a_private_fork_is_always_reviewed_whatever_the_channel_says():
    assert Policy().reviewed(fork(private_of="C1")) is True
    assert Policy().reviewed(fork()) is False and Policy.knobs(merge_review=True).reviewed(fork()) is True


def test_a_switch_is_thrown_once_and_closes_the_stream_registered_before_or_after():
    closed = []
    switch = Switch(1)
    switch.on_stop(lambda: closed.append("first stream"))
    assert switch.stop("U1") and not switch.stop("U2") and switch.stopped_by == "U1"
    switch.on_stop(lambda: closed.append("a stream opened after the stop"))
    switch.on_stop(None)
    assert closed == ["first stream", "a stream opened after the stop"] and switch.requested()


def test_the_watcher_obeys_a_stop_recorded_by_another_replica_within_its_poll():
    store = memory_store(FakeClock())
    parent = store.sessions.parent_id(fork().channel)
    batch = made(Queue, store).submit(parent, "q", author_id="U1", author_name=None, slack_ts=None, channel=None,
                                    claim=None, owner="A", lease_seconds=60).batch
    watcher = ThreadPoolExecutor(max_workers=1)  # the one thread the composition root gives the watcher
    here, elsewhere = Stopping(store.stops, poll=0.02, watcher=watcher), Stopping(store.stops, poll=0.02)
    stopped = threading.Event()
    with here.holding(batch.reply.id) as switch:
        switch.on_stop(stopped.set)
        elsewhere.session_stopped(parent, "UBOB0001")  # lands on a process that does not write the answer
        assert stopped.wait(2) and switch.stopped_by == "UBOB0001"
    here.close()
    watcher.shutdown(wait=True)  # close() ends the watcher's loop: its thread is free
