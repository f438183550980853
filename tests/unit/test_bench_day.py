"""Figure 11's day (bench/day.py) is the day the issue describes, the same every run, and its pricing is
the bot's: the parent in bursts with 10–50-minute pauses, three forks with a meeting between two bursts
each, two merged and one abandoned; usage priced as the fake Anthropic reported it."""
from bench.day import day, history, price, with_memory
from bot.domain.model import Usage
from bot.domain.spend import priced
from tests.fakes.anthropic_api import FakeAnthropic


def test_the_day_is_seeded_and_shaped_as_a_teams_day():
    steps = day()
    assert steps == day() and history() == history()
    kinds = [s.kind for s in steps]
    assert (kinds.count("open"), kinds.count("merge"), kinds.count("abandon")) == (3, 2, 1)
    parent = [s.minute for s in steps if s.kind == "ask"]
    pauses = [b - a for a, b in zip(parent, parent[1:]) if b - a > 5]
    assert len(pauses) >= 8 and all(10 <= p <= 53 for p in pauses)  # a pause, plus the burst's last gap
    for number in (1, 2, 3):
        own = [s.minute for s in steps if s.fork == number and s.kind in ("open", "turn")]
        assert max(b - a for a, b in zip(own, own[1:])) >= 15  # a meeting between its two bursts
    assert [s.minute for s in steps] == sorted(s.minute for s in steps)


def test_a_run_is_priced_from_the_usage_the_fake_reported():
    claude = FakeAnthropic()
    claude.requests[:] = [{"model": "claude-sonnet-5-5"}, {"model": "claude-sonnet-5-5"}]
    claude.usages.update({0: {"input_tokens": 10, "output_tokens": 100, "cache_read_input_tokens": 5_000,
                              "cache_creation_input_tokens": 2_000,
                              "cache_creation": {"ephemeral_5m_input_tokens": 500, "ephemeral_1h_input_tokens": 1_500}}})
    run = price("auto", claude)
    claude.server.httpd.server_close()  # never started: nothing to stop but its socket
    expected = priced("claude-sonnet-5-5", Usage(10, 100, 5_000, 2_000, cache_write_1h_tokens=1_500))
    assert run.requests == 1 and run.usage["cost_micros"] == expected.cost_micros > 0


def test_the_memory_run_is_the_same_day_with_a_fact_remembered_after_three_turns_and_each_merge():
    steps = day()
    remembering = with_memory(steps)
    assert [s for s in remembering if s.kind != "remember"] == steps and with_memory(steps) == remembering
    remembers = [s for s in remembering if s.kind == "remember"]
    assert len(remembers) == 3 + 2 and all(s.text for s in remembers)
    assert [s.minute for s in remembering] == sorted(s.minute for s in remembering)
