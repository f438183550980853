"""The store contract for spend (the Spending port), on the in-memory store, SQLite and PostgreSQL: every
recorded answer, summary, draft and compaction adds its estimated cost to its channel's day in the same
call, forks' part apart; a turn's read of its settings brings the month's spend only where a cap applies;
months and days are UTC; concurrent answers lose nothing; forgetting takes the figures along."""
from concurrent.futures import ThreadPoolExecutor
from datetime import datetime

from bot.domain.model import Channel, Mode, Role, TurnStatus, Usage
from bot.domain.pricing import priced
from bot.domain.settings import ChannelSettings
from bot.domain.spend import Spent
from bot.services.ports import Standing
from ..merges import begin_merge
from bot.app import made
from bot.services.queue import Queue
from .use_cases import compact, merge_in, record_draft

GENERAL = Channel("T1", "C1")
MODEL = "claude-sonnet-5-5"


def usage(input_tokens=1_000, output_tokens=100, model=MODEL, **more) -> Usage:
    return priced(model, Usage(input_tokens, output_tokens, **more))


def answered(store, session_id, used: Usage, owner="A"):
    batch = made(Queue, store).submit(session_id, "q", author_id="U1", author_name="Ann", slack_ts=None, channel=None,
                                    claim=None, owner=owner, lease_seconds=60).batch
    made(Queue, store).record(batch.reply, batch.pending, "a", used, [], None, owner, 60)
    return batch.reply


def test_an_answer_adds_its_priced_usage_to_its_channels_day_and_keeps_it_on_the_turn(store):
    parent = store.sessions.parent_id(GENERAL)
    used = usage(cache_read_tokens=50_000, cache_write_tokens=2_000, cache_write_1h_tokens=2_000)
    reply = answered(store, parent, used)
    assert store.turns.turns(parent)[-1].usage == used  # every field, cost and the 1-hour writes included
    assert reply.id == store.turns.turns(parent)[-1].id
    report = store.spending.report(GENERAL)
    assert report.today == report.month == Spent(used.cost_micros, 0, used.uncached_micros, 0)
    assert report.month.saved_micros > 0 and report.month_name == store.clock().strftime("%B %Y")
    assert store.spending.report(Channel("T2", "C1")).month == Spent()


def test_forks_their_summaries_and_drafts_count_as_what_forks_cost_and_compactions_count_too(store):
    parent = store.sessions.parent_id(GENERAL)
    fork = store.sessions.create_fork(GENERAL, "U1", Mode.INHERIT, "topic")
    answered(store, parent, usage(1_000))
    answered(store, fork.id, usage(2_000))
    number = store.reviews.begin_draft(fork.id, 0, "drafter", 60)
    assert record_draft(store, store.sessions.fork(fork.id), number, "draft", 1, usage(3_000), "U1", "drafter")
    assert begin_merge(store, fork.id, "U1", "merger", 60)
    merge_in(store, store.sessions.fork(fork.id), "[Merged]", "summary", usage(4_000))
    answered(store, parent, usage(0, 0))  # an exchange more: the compaction covers what came before it
    assert compact(store, parent, "the gist", usage(5_000)).role is Role.COMPACTION
    month = store.spending.report(GENERAL).month
    costs = {n: usage(n).cost_micros for n in (1_000, 2_000, 3_000, 4_000, 5_000)}
    assert month.cost_micros == sum(costs.values())
    assert month.fork_micros == costs[2_000] + costs[3_000] + costs[4_000]


def test_a_model_missing_from_the_price_table_is_counted_never_priced(store):
    parent = store.sessions.parent_id(GENERAL)
    answered(store, parent, usage(model="claude-unpriced-test"))
    answered(store, parent, usage(), owner="B")
    month = store.spending.report(GENERAL).month
    assert (month.cost_micros, month.unpriced) == (usage().cost_micros, 1)


def test_a_turns_read_brings_the_channels_settings_and_its_months_spend(store):
    parent = store.sessions.parent_id(GENERAL)
    answered(store, parent, usage())
    spent = usage().cost_micros
    assert store.spending.chosen(GENERAL) == Standing(ChannelSettings(), spent, parent)
    store.channel_settings.save(GENERAL, ChannelSettings(monthly_spend_cap_usd=10.0, model="claude-haiku-5-5"),
                                "UADMIN01")
    read = store.spending.chosen(GENERAL)
    assert (read.settings.monthly_spend_cap_usd, read.settings.model, read.month_micros) == (
        10.0, "claude-haiku-5-5", spent)
    assert store.channel_settings.of(GENERAL) == read.settings


def test_a_turns_read_finds_its_channels_session_or_none_and_makes_none(store):
    elsewhere = Channel("T1", "C7")
    assert store.spending.chosen(elsewhere) == Standing(ChannelSettings(), 0, None)
    assert store.spending.chosen(elsewhere).parent_id is None  # reading it made no session
    parent = store.sessions.parent_id(elsewhere)
    assert store.spending.chosen(elsewhere).parent_id == parent
    assert store.spending.chosen(Channel("T2", "C7")).parent_id is None  # another workspace's channel


def test_a_deliverys_keep_reads_what_its_turn_reads_of_the_channel_and_a_redelivery_reads_nothing(store):
    parent = store.sessions.parent_id(GENERAL)
    answered(store, parent, usage())
    store.channel_settings.save(GENERAL, ChannelSettings(monthly_spend_cap_usd=10.0), "UADMIN01")
    read = store.inbox.keep_and_read("event:Ev1", "{}", 30, GENERAL)
    assert read == store.spending.chosen(GENERAL) == Standing(ChannelSettings(monthly_spend_cap_usd=10.0),
                                                               usage().cost_micros, parent)
    assert store.inbox.keep_and_read("event:Ev1", "{}", 30, GENERAL) is None  # Slack's retry: turned away
    assert store.inbox.keep("event:Ev1", "{}", 30) is False  # one inbox, however the delivery was kept
    assert store.inbox.keep_and_read("event:Ev2", "{}", 30, Channel("T1", "C7")) == Standing(ChannelSettings(), 0,
                                                                                              None)


def test_days_and_months_are_utc_and_a_new_month_starts_from_nothing(store):
    parent = store.sessions.parent_id(GENERAL)
    store.clock.now = datetime(2026, 11, 30, 23, 50)
    answered(store, parent, usage(1_000))
    store.clock.now = datetime(2026, 12, 1, 0, 10)
    answered(store, parent, usage(2_000), owner="B")
    report = store.spending.report(GENERAL)
    assert report.month_name == "December 2026"
    assert report.month.cost_micros == report.today.cost_micros == usage(2_000).cost_micros
    store.clock.now = datetime(2026, 12, 2, 9, 0)
    report = store.spending.report(GENERAL)
    assert report.today == Spent() and report.month.cost_micros == usage(2_000).cost_micros
    assert store.spending.chosen(GENERAL).month_micros == usage(2_000).cost_micros
    store.clock.now = datetime(2027, 1, 1, 0, 0)
    assert store.spending.chosen(GENERAL).month_micros == 0


def test_every_channel_of_the_workspace_has_its_month_and_no_other_workspaces(store):
    other = Channel("T1", "C2")
    answered(store, store.sessions.parent_id(GENERAL), usage(1_000))
    answered(store, store.sessions.parent_id(other), usage(2_000))
    answered(store, store.sessions.parent_id(Channel("T2", "C9")), usage(3_000))
    months = store.spending.months("T1")
    assert {c: m.cost_micros for c, m in months.items()} == {"C1": usage(1_000).cost_micros,
                                                            "C2": usage(2_000).cost_micros}


def test_concurrent_answers_in_one_channel_lose_no_cost(store):
    forks = [store.sessions.create_fork(GENERAL, "U1", Mode.FRESH, f"t{n}") for n in range(6)]
    with ThreadPoolExecutor(max_workers=6) as pool:
        list(pool.map(lambda pair: answered(store, pair[1].id, usage(1_000 * (pair[0] + 1)), owner=f"O{pair[0]}"),
                      enumerate(forks)))
    month = store.spending.report(GENERAL).month
    assert month.cost_micros == month.fork_micros == sum(usage(1_000 * (n + 1)).cost_micros for n in range(6))


def test_forgetting_the_channel_or_the_workspace_takes_its_figures_and_keeps_its_cap(store):
    other = Channel("T1", "C2")
    store.channel_settings.save(GENERAL, ChannelSettings(monthly_spend_cap_usd=10.0), "UADMIN01")
    for channel in (GENERAL, other):
        answered(store, store.sessions.parent_id(channel), usage())
    store.erasure.forget_channel(GENERAL)
    assert store.spending.report(GENERAL).month == Spent()
    assert store.spending.chosen(GENERAL) == Standing(ChannelSettings(monthly_spend_cap_usd=10.0), 0, None)
    assert store.spending.report(other).month.cost_micros == usage().cost_micros
    store.erasure.forget_team("T1")
    assert store.spending.months("T1") == {}


def test_an_answer_without_cost_or_unpriced_calls_writes_no_figures(store):
    parent = store.sessions.parent_id(GENERAL)
    answered(store, parent, Usage(10, 10))  # as a fake model reports it: no price was applied
    store.turns.append_turn(parent, Role.ASSISTANT, "seeded", TurnStatus.COMPLETE, usage=Usage(5, 5))
    assert store.spending.months("T1") == {}
