"""The store contract for spend reservations (the Spending port), in memory, on SQLite and on PostgreSQL: a turn
sets its worst case aside on its channel's day only while the month's spend plus what is set aside is under the
cap, atomically however many ask at once; recording its answer settles it, a failed call releases it; a private
fork's answer is its channel's cost."""
from concurrent.futures import ThreadPoolExecutor
from datetime import timedelta

from bot.domain.model import Channel, Mode, Role, TurnStatus, Usage
from bot.domain.spend import Spent
from bot.domain.pricing import priced
from bot.app import made
from bot.services.queue import Queue

from .use_cases import compact

GENERAL = Channel("T1", "C1")
CAP = 20_000  # $0.02


def used(input_tokens: int) -> Usage:
    return priced("claude-sonnet-5-5", Usage(input_tokens, 0))  # $2 / MTok: 500 tokens a tenth of a cent


def spend(store, session_id: int, micros: int, owner: str = "A") -> None:
    batch = made(Queue, store).submit(session_id, "q", author_id="U1", author_name="Ann", slack_ts=None, channel=None,
                                    claim=None, owner=owner, lease_seconds=60).batch
    made(Queue, store).record(batch.reply, batch.pending, "a", used(micros // 2), [], None, owner, 60)


def test_a_reservation_is_admitted_under_the_cap_and_counted_in_the_turns_read_until_it_is_released(store):
    spend(store, store.sessions.parent_id(GENERAL), 10_500)
    reservation = store.spending.reserve(GENERAL, 80_000, CAP)
    assert reservation is not None and reservation.micros == 80_000 and reservation.channel == GENERAL
    standing = store.spending.chosen(GENERAL)
    assert (standing.month_micros, standing.reserved_micros) == (10_500, 80_000)
    assert store.spending.reserve(GENERAL, 1, CAP) is None  # the cap, with what is set aside, is reached
    assert store.spending.reserve(Channel("T1", "C2"), 1, CAP) is not None  # another channel's is its own
    store.spending.release(reservation)
    assert store.spending.chosen(GENERAL).reserved_micros == 0
    assert store.spending.reserve(GENERAL, 1, CAP) is not None


def test_at_the_cap_nothing_is_reserved(store):
    spend(store, store.sessions.parent_id(GENERAL), CAP)
    assert store.spending.reserve(GENERAL, 1, CAP) is None
    assert store.spending.chosen(GENERAL).reserved_micros == 0


def test_the_months_earlier_days_count_and_last_months_do_not(store, clock):
    parent = store.sessions.parent_id(GENERAL)
    spend(store, parent, CAP)
    clock.now += timedelta(days=1)
    if clock.now.day == 1:  # the month turned: nothing of last month counts
        assert store.spending.reserve(GENERAL, 1, CAP) is not None
    else:
        assert store.spending.reserve(GENERAL, 1, CAP) is None
    clock.now += timedelta(days=40)
    assert store.spending.reserve(GENERAL, 1, CAP) is not None


def test_recording_the_answer_settles_its_reservation_to_the_real_cost(store):
    parent = store.sessions.parent_id(GENERAL)
    reservation = store.spending.reserve(GENERAL, 80_000, CAP)
    batch = made(Queue, store).submit(parent, "q", author_id="U1", author_name="Ann", slack_ts=None, channel=None,
                                    claim=None, owner="A", lease_seconds=60).batch
    made(Queue, store).record(batch.reply, batch.pending, "a", used(6_000), [], None, "A", 60,
                             reservation=reservation)
    standing = store.spending.chosen(GENERAL)
    assert (standing.month_micros, standing.reserved_micros) == (12_000, 0)


def test_a_failed_call_releases_its_reservation(store):
    parent = store.sessions.parent_id(GENERAL)
    reservation = store.spending.reserve(GENERAL, 80_000, CAP)
    batch = made(Queue, store).submit(parent, "q", author_id="U1", author_name="Ann", slack_ts=None, channel=None,
                                    claim=None, owner="A", lease_seconds=60).batch
    made(Queue, store).abort(batch.reply, batch.pending, "A", 60, reservation)
    assert store.spending.chosen(GENERAL).reserved_micros == 0


def test_six_reservations_at_once_admit_one_when_its_worst_case_fills_the_cap(store):
    spend(store, store.sessions.parent_id(GENERAL), 10_500)
    with ThreadPoolExecutor(6) as pool:
        admitted = [r for r in pool.map(lambda _: store.spending.reserve(GENERAL, 80_000, CAP), range(6)) if r]
    assert len(admitted) == 1
    assert store.spending.chosen(GENERAL).reserved_micros == 80_000


def test_small_reservations_at_once_stop_at_the_cap(store):
    with ThreadPoolExecutor(8) as pool:
        admitted = [r for r in pool.map(lambda _: store.spending.reserve(GENERAL, 3_000, CAP), range(20)) if r]
    assert len(admitted) == 7  # 7 × $0.003 reaches $0.02; an eighth would start at the cap
    assert store.spending.chosen(GENERAL).reserved_micros == 21_000


def test_a_private_forks_answer_is_its_channels_cost_not_its_dms(store):
    dm = Channel("T1", "D1")
    fork = store.private.open_private_fork(GENERAL, dm, "1.000100", "U1", "a question").fork
    spend(store, fork.id, 4_000)
    assert store.spending.report(GENERAL).month.cost_micros == 4_000
    assert store.spending.report(GENERAL).month.fork_micros == 4_000
    assert store.spending.report(dm).month.cost_micros == 0


def test_a_private_forks_compaction_is_its_channels_cost_not_its_dms(store):
    dm = Channel("T1", "D1")
    fork = store.private.open_private_fork(GENERAL, dm, "1.000100", "U1", "a question").fork
    for text in ("first", "second", "third"):
        store.turns.append_turn(fork.id, Role.USER, text, TurnStatus.ANSWERED, author_id="U1")
    used = priced("claude-sonnet-5-5", Usage(3_000, 200))
    assert compact(store, fork.id, "the gist", used).role is Role.COMPACTION
    assert store.spending.report(GENERAL).month.fork_micros == used.cost_micros > 0
    assert store.spending.report(dm).month == Spent()


def reserved_for_a_reply(store, session_id: int, channel: Channel = GENERAL, owner: str = "A"):
    """A turn submitted and its reply's worst case reserved, kept with the reply (as Conversation does)."""
    batch = made(Queue, store).submit(session_id, "q", author_id="U1", author_name="Ann", slack_ts=None, channel=None,
                                    claim=None, owner=owner, lease_seconds=60).batch
    return batch, store.spending.reserve(channel, 8_000, CAP, batch.reply.id)


def test_the_reservation_of_a_reply_whose_process_died_is_given_back_when_the_sweep_interrupts_it(store, clock):
    parent = store.sessions.parent_id(GENERAL)
    batch, reservation = reserved_for_a_reply(store, parent)
    assert reservation.reply_id == batch.reply.id and store.spending.chosen(GENERAL).reserved_micros == 8_000
    clock.advance(seconds=61)  # its process died: the heartbeat stopped, the lease lapsed
    assert store.upkeep.interrupt_streaming(parent) == 1
    assert store.spending.chosen(GENERAL).reserved_micros == 0
    made(Queue, store).record(batch.reply, batch.pending, "a", used(1_000), [], None, "A", 60,
                             reservation=reservation)  # the old holder, late: taken over, gives nothing back twice
    store.spending.release(reservation)
    reserved_for_a_reply(store, parent, owner="B")
    assert store.spending.chosen(GENERAL).reserved_micros == 8_000  # the new reply's only, whole


def test_a_reservation_kept_with_its_reply_is_given_back_once_whoever_tries(store):
    parent = store.sessions.parent_id(GENERAL)
    fork = store.sessions.create_fork(GENERAL, "U1", Mode.FRESH, "")
    batch, reservation = reserved_for_a_reply(store, parent)
    reserved_for_a_reply(store, fork.id, owner="B")
    assert store.spending.chosen(GENERAL).reserved_micros == 16_000
    made(Queue, store).abort(batch.reply, batch.pending, "A", 60, reservation)
    store.spending.release(reservation)
    assert store.upkeep.interrupt_streaming(parent) == 0
    assert store.spending.chosen(GENERAL).reserved_micros == 8_000  # the fork's reply's stays set aside
    assert store.upkeep.interrupt_streaming(fork.id) == 1  # cut: its part goes too
    assert store.spending.chosen(GENERAL).reserved_micros == 0


def test_a_private_forks_reservation_is_given_back_on_its_channels_day(store, clock):
    dm = Channel("T1", "D1")
    fork = store.private.open_private_fork(GENERAL, dm, "1.000100", "U1", "a question").fork
    _, reservation = reserved_for_a_reply(store, fork.id, owner="B")
    assert reservation and store.spending.chosen(GENERAL).reserved_micros == 8_000
    clock.advance(seconds=61)
    store.upkeep.interrupt_streaming(fork.id)
    assert store.spending.chosen(GENERAL).reserved_micros == 0 and store.spending.chosen(dm).reserved_micros == 0
