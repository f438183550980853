"""THREADFORK_CACHE_TTL on the wire, end to end through the fakes: every `cache_control` the bot sends
under `1h` and under `5m`; under `auto`, a parent whose people write minutes apart gets the hour on its
system prompt and history while a fork's quick back-and-forth keeps five minutes, and no request puts a
1-hour breakpoint after a 5-minute one (the fake refuses that as the API does, and the fixtures fail on any
refusal). Minutes pass on the fakes' clocks — the Slack timestamps of people's messages and the fake
Anthropic's prompt cache — never in the test."""
import pytest

from ..harness import CHANNEL, wait_until

LONG = "The launch plan depends on the billing migration, the support rota and the beta cohort. " * 30


def controls(request: dict) -> list[dict]:
    """Every cache_control of a request, in the order the API reads them (tools, system, messages)."""
    found = [t["cache_control"] for t in request.get("tools") or [] if "cache_control" in t]
    found += [b["cache_control"] for b in request["system"] if "cache_control" in b]
    return found + [b["cache_control"] for m in request["messages"] for b in m["content"] if "cache_control" in b]


def ttls(request: dict) -> list[str]:
    return [control.get("ttl", "5m") for control in controls(request)]


def in_order(request: dict) -> bool:
    """No 1-hour breakpoint after a 5-minute one."""
    seen = ttls(request)
    return all(not (later == "1h" and "5m" in seen[:n]) for n, later in enumerate(seen))


def ask(bot, slack, claude, text, *, thread_ts=None, minutes=0.0, user="UALICE01"):
    """A message written `minutes` after the one before (on both fakes' clocks); its request."""
    slack.pass_time(minutes=minutes)
    claude.cache.clock.advance(minutes=minutes)
    before = len(claude.requests)
    bot.say(user, text, mention=thread_ts is None, thread_ts=thread_ts)
    wait_until(lambda: len(claude.requests) > before, message="the request")
    bot.settled()
    return claude.requests[-1]


def open_fork(bot, slack, claude, topic="explore the pricing", minutes=0.0, number=1):
    """`/fork --inherit <topic>` `minutes` later; its root and its first request (the topic's answer)."""
    slack.pass_time(minutes=minutes)
    claude.cache.clock.advance(minutes=minutes)
    before = len(claude.requests)
    bot.slash("/fork", f"--inherit {topic}")
    root = bot.fork_root(number)
    wait_until(lambda: len(claude.requests) > before, message="the fork's first request")
    bot.settled()
    return root, claude.requests[before]


@pytest.mark.settings(threadfork_cache_ttl="1h")
def test_with_one_hour_every_breakpoint_the_bot_sends_carries_ttl_1h(bot, slack, claude):
    ask(bot, slack, claude, "plan the launch")
    ask(bot, slack, claude, "and the rota?")
    root, _ = open_fork(bot, slack, claude)
    ask(bot, slack, claude, "what about tiers?", thread_ts=root)
    bot.react("UCAROL01", root)
    wait_until(lambda: any("[Merge request]" in str(r["messages"][-1]) for r in claude.requests))
    bot.settled()
    assert len(claude.requests) >= 5
    for request in claude.requests:
        assert controls(request) and all(c == {"type": "ephemeral", "ttl": "1h"} for c in controls(request))


@pytest.mark.settings(threadfork_cache_ttl="5m")
def test_with_five_minutes_no_breakpoint_carries_another_ttl_however_slow_the_channel(bot, slack, claude):
    for n in range(4):
        ask(bot, slack, claude, f"point {n}", minutes=12)
    root, _ = open_fork(bot, slack, claude, minutes=12)
    ask(bot, slack, claude, "deeper", thread_ts=root, minutes=12)
    for request in claude.requests:
        assert controls(request) and all(c == {"type": "ephemeral"} for c in controls(request))


def test_auto_gives_a_slow_parent_the_hour_and_a_quick_fork_five_minutes_and_keeps_the_order(bot, slack, claude):
    first = ask(bot, slack, claude, "kick-off")
    assert ttls(first) == ["5m", "5m"]  # nothing known yet of the channel's pace: the API's default
    ask(bot, slack, claude, "after the stand-up", minutes=7)
    slow = ask(bot, slack, claude, "after lunch", minutes=25)
    assert ttls(slow) == ["1h", "1h"]  # system prompt and history
    assert controls(slow) == [{"type": "ephemeral", "ttl": "1h"}] * 2
    root, fork_first = open_fork(bot, slack, claude, minutes=1)
    assert ttls(fork_first) == ["1h", "1h", "5m"]  # the inherited prefix is kept an hour; its topic moves on
    for _ in range(3):
        quick = ask(bot, slack, claude, "and then?", thread_ts=root, minutes=1)
        # system, inherited prefix, the fork's own answered turns: an hour; its newest turn: five minutes
        assert ttls(quick) == ["1h", "1h", "1h", "5m"]
    assert all(in_order(r) for r in claude.requests) and not claude.rejections


def test_a_quick_parent_keeps_its_history_an_hour_and_a_slow_fork_moves_on_the_hour(bot, slack, claude):
    for _ in range(3):
        quick = ask(bot, slack, claude, "quick one", minutes=1)
    assert ttls(quick) == ["1h", "1h", "5m"]  # system, the answered history, the newest turn
    root, _ = open_fork(bot, slack, claude)
    ask(bot, slack, claude, "first thought", thread_ts=root, minutes=1)
    ask(bot, slack, claude, "after a meeting", thread_ts=root, minutes=20)
    slow = ask(bot, slack, claude, "after another", thread_ts=root, minutes=30)
    assert ttls(slow) == ["1h", "1h", "1h"]
    assert all(in_order(r) for r in claude.requests) and not claude.rejections


def read_from_cache(claude, request: dict) -> int:
    return claude.usages[claude.requests.index(request)]["cache_read_input_tokens"]


@pytest.mark.parametrize("mode, reads", [("auto", True), ("5m", False)])
def test_a_fork_opened_after_a_meeting_reads_the_parents_cache_only_if_it_was_kept_an_hour(slack, claude,
                                                                                          migrated_sqlite_url,
                                                                                           mode, reads):
    from ..harness import RunningBot

    bot = RunningBot(slack, claude, migrated_sqlite_url, threadfork_cache_ttl=mode)
    try:
        for n, minutes in enumerate((0, 8, 15)):
            ask(bot, slack, claude, f"point {n}: {LONG}", minutes=minutes)
        parent_last = claude.requests[-1]
        last = claude.usages[len(claude.requests) - 1]
        assert last["cache_read_input_tokens"] + last["cache_creation_input_tokens"] > 1024  # long enough to cache
        assert (last["cache_read_input_tokens"] > 0) is reads  # 15 minutes after the turn before
        _, fork_first = open_fork(bot, slack, claude, minutes=20)  # everyone was in a meeting
        assert (read_from_cache(claude, fork_first) > 0) is reads
        # byte for byte the parent's prefix either way: only the ttl beside it differs
        strip = lambda request: [{k: v for k, v in b.items() if k != "cache_control"}  # noqa: E731
                                 for m in request["messages"] for b in m["content"]]
        assert strip(fork_first)[:len(strip(parent_last))] == strip(parent_last)
    finally:
        bot.stop()
    assert [p for p in slack.posts(CHANNEL, top_level=True) if p.get("text", "").startswith("Fork #")]
