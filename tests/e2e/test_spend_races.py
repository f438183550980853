"""The monthly cap under concurrency (issue 34), on SQLite and PostgreSQL: turns reserve their worst case before
they call Claude and settle to the real cost after, so six fork turns sent at once, or messages queued behind a
streaming answer, pass the cap by one turn's worst case at most, and every turn refused says so privately."""
import pytest

from bot.domain.context import SYSTEM_PROMPT
from bot.domain.model import Channel
from bot.domain.spend import price_of

from ..fakes.anthropic_api import Script
from ..harness import CHANNEL, GENERAL, TEAM_ID, RunningBot, at_once, wait_until

CAP = 0.02
SPENT = 0.0105
DOLLAR = 500_000  # input tokens that cost one dollar at the default model's price ($2 / MTok)
CAPPED = "reached its monthly spend cap"



def spend_most_of_the_cap(bot, claude) -> None:
    """The channel's month at $0.0105 of its cap: one answer priced so, recorded."""
    claude.script(Script(text="ok", usage={"input_tokens": round(SPENT * DOLLAR), "output_tokens": 0}))
    bot.say("UALICE01", "what did we spend?", mention=True)
    bot.settled()
    assert month_micros(bot) == 10_500

def worst_case_micros(bot) -> int:
    """One turn's worst case as the issue states it: its input as counted plus max_tokens of output, at the
    model's price (a short fork's input is the system prompt and a line or two: counted generously here)."""
    price = price_of(bot.settings.threadfork_model)
    counted = len(SYSTEM_PROMPT) // 4 + 200
    return round(counted * price.input + bot.settings.threadfork_max_tokens * price.output)


@pytest.fixture
def capped_bot(slack, claude, migrated_url):
    running = RunningBot(slack, claude, migrated_url, threadfork_monthly_spend_cap_usd=CAP)
    yield running
    running.stop()



def month_micros(bot) -> int:
    return bot.store.spending.report(GENERAL).month.cost_micros


def told(slack, user: str) -> list[str]:
    return [c["text"] for c in slack.calls_to("chat.postEphemeral") if c["user"] == user]


def test_six_fork_turns_sent_at_once_pass_the_cap_by_one_turns_worst_case_at_most(capped_bot, slack, claude):
    bot = capped_bot
    roots = []
    for number in range(1, 7):
        bot.slash("/fork", "--fresh")
        roots.append(bot.fork_root(number))
    spend_most_of_the_cap(bot, claude)
    before = len(claude.requests)
    # each answer costs $0.012 and streams slowly, so all six overlap: without a reservation all six are answered
    claude.default_script = Script(text="a fork answer", usage={"input_tokens": 6_000, "output_tokens": 0},
                                   chunk_delay=0.1)
    users = [f"UPERSON{n:02d}" for n in range(1, 7)]
    at_once(*(lambda root=root, user=user: bot.say(user, "go on", thread_ts=root) for root, user in zip(roots, users)))
    bot.settled(timeout=30)
    answered = len(claude.requests) - before
    assert month_micros(bot) <= round(CAP * 1_000_000) + worst_case_micros(bot)
    refused = [u for u in users if any(CAPPED in t for t in told(slack, u))]
    assert answered + len(refused) == 6 and answered >= 1, (answered, refused)
    assert len(refused) == 5  # one turn's worst case ($0.08) is more than what was left under the cap
    assert all(len(told(slack, u)) == 1 for u in refused)  # once each
    assert bot.store.spending.chosen(GENERAL).reserved_micros == 0  # every reservation settled


def test_messages_queued_behind_a_streaming_answer_are_admitted_against_its_reservation(capped_bot, slack, claude):
    bot = capped_bot
    claude.script(Script(text="ok", usage={"input_tokens": round(SPENT * DOLLAR), "output_tokens": 0}))
    bot.say("UALICE01", "what did we spend?", mention=True)
    bot.settled()
    before = len(claude.requests)
    claude.default_script = Script(text="a long answer", usage={"input_tokens": 6_000, "output_tokens": 0},
                                   chunk_delay=0.3)
    bot.say("UALICE01", "a long question", mention=True)
    wait_until(lambda: len(claude.requests) > before, message="the answer streaming")
    for user in ("UBOB0001", "UCAROL01", "UDAVE001"):
        bot.say(user, "and mine?", mention=True)
    bot.settled(timeout=30)
    assert len(claude.requests) == before + 1
    assert month_micros(bot) <= round(CAP * 1_000_000) + worst_case_micros(bot)
    for user in ("UBOB0001", "UCAROL01", "UDAVE001"):
        assert [t for t in told(slack, user) if CAPPED in t], user
    assert bot.store.spending.chosen(GENERAL).reserved_micros == 0


def test_a_failed_call_releases_its_reservation(capped_bot, slack, claude):
    bot = capped_bot
    claude.script(Script(status=529, error_type="overloaded_error", error_message="Overloaded"))
    bot.say("UALICE01", "this one fails", mention=True)
    bot.settled()
    assert bot.store.spending.chosen(GENERAL).reserved_micros == 0
    claude.script(Script(text="ok", usage={"input_tokens": 100, "output_tokens": 10}))
    bot.say("UALICE01", "this one is answered", mention=True)
    bot.settled()
    assert not [t for t in told(slack, "UALICE01") if CAPPED in t]
    assert [p for p in slack.posts(CHANNEL, top_level=True) if p.shown.startswith("ok")]


def test_a_private_fork_counts_against_the_channel_it_forks_and_stops_at_its_cap(capped_bot, slack, claude):
    bot, dm = capped_bot, "D0ALICE001"
    slack.add_room(CHANNEL, "general", ["UALICE01", "UBOB0001"])
    bot.view_channel("UALICE01", CHANNEL, dm=dm)
    bot.settled()
    claude.script(Script(text="a private answer", usage={"input_tokens": round(SPENT * DOLLAR), "output_tokens": 0}))
    root = bot.dm("UALICE01", "what about pricing for schools?", dm=dm)
    wait_until(lambda: len(claude.requests) == 1, message="the private fork's first request")
    bot.settled()
    assert month_micros(bot) == 10_500  # the channel's cost, not the DM's
    assert bot.store.spending.report(Channel(TEAM_ID, dm)).month.cost_micros == 0
    claude.script(Script(text="another", usage={"input_tokens": round(SPENT * DOLLAR), "output_tokens": 0}))
    bot.dm("UALICE01", "and for universities?", dm=dm, thread_ts=root)
    wait_until(lambda: len(claude.requests) == 2, message="the second private turn")
    bot.settled()
    assert month_micros(bot) == 21_000  # the channel is at its cap now
    bot.dm("UALICE01", "and for colleges?", dm=dm, thread_ts=root)
    bot.settled()
    assert len(claude.requests) == 2  # no model call past the channel's cap
    assert [t for t in told(slack, "UALICE01") if CAPPED in t and f"<#{CHANNEL}>" in t]


def test_six_private_fork_turns_sent_at_once_reserve_against_their_channel_like_its_own_turns(capped_bot, slack,
                                                                                             claude):
    bot = capped_bot
    users = [f"UPERSON{n:02d}" for n in range(1, 7)]
    slack.add_room(CHANNEL, "general", users)
    roots = {}
    for n, user in enumerate(users, start=1):  # each opens a private fork of #general from their DM with the bot
        dm = f"D0PERSON{n:02d}"
        bot.view_channel(user, CHANNEL, dm=dm)
        bot.settled()
        claude.script(Script(text="a private start", usage={"input_tokens": 0, "output_tokens": 0}))
        roots[user] = (dm, bot.dm(user, "let me explore", dm=dm))
        bot.settled()
    spend_most_of_the_cap(bot, claude)
    before = len(claude.requests)
    claude.default_script = Script(text="a private answer", usage={"input_tokens": 6_000, "output_tokens": 0},
                                   chunk_delay=0.1)
    at_once(*(lambda user=user: bot.dm(user, "go on", dm=roots[user][0], thread_ts=roots[user][1]) for user in users))
    bot.settled(timeout=30)
    answered = len(claude.requests) - before
    assert month_micros(bot) <= round(CAP * 1_000_000) + worst_case_micros(bot)
    refused = [u for u in users if any(CAPPED in t and f"<#{CHANNEL}>" in t for t in told(slack, u))]
    assert answered == 1 and len(refused) == 5, (answered, refused)
    assert bot.store.spending.chosen(GENERAL).reserved_micros == 0
