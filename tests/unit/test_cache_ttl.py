"""THREADFORK_CACHE_TTL on the pure domain (bot/domain/caching.py): which TTL each breakpoint gets — the
moving one by the session's pace, settled history (an inherited prefix, the session's own answered turns)
kept an hour under `auto` — that a 1-hour one never follows a 5-minute one, and that the choice changes no
byte of a cached prefix."""
import json

import pytest

from bot.domain.caching import RECENT, CacheMode, Ttl, gaps, paced, settled
from bot.domain.context import asking, compaction_input, fork_input, parent_input, with_request
from bot.domain.merge import merge_prompt
from bot.domain.model import Fork, ForkStatus, Mode, Role, Turn, TurnStatus
from bot.llm.claude import RequestEncoder
from tests.fakes.messages_rules import refusal

MINUTE = 60.0
DAY_START = 1_767_000_000.0


def talk(minutes: list[float], session: int = 1, author: str = "UALICE01", waiting: bool = True) -> list[Turn]:
    """A user turn written at each of these minutes of the day, each answered at once but (`waiting`) the
    last, which the request being built is to answer."""
    turns = []
    for n, at in enumerate(minutes):
        ts = f"{DAY_START + at * MINUTE:.6f}"
        last = n == len(minutes) - 1 and waiting
        turns.append(Turn(session, 2 * n + 1, Role.USER, f"question {n}", author, "alice",
                          TurnStatus.PENDING if last else TurnStatus.ANSWERED, slack_ts=ts))
        if not last:
            turns.append(Turn(session, 2 * n + 2, Role.ASSISTANT, f"answer {n}", slack_ts=f"{float(ts) + 5:.6f}"))
    return turns


def fork(mode=Mode.INHERIT, point=None, parent_id=1, depth=1, number=3, fork_id=9):
    return Fork(id=fork_id, channel_id="C1", team_id="T1", number=number, parent_id=parent_id, mode=mode,
                topic="pricing", owner_id="UALICE01", fork_point_seq=point, status=ForkStatus.OPEN, depth=depth,
                parent_number=2 if depth > 1 else None)


def ttls(model_input) -> list[Ttl]:
    """The system prompt's TTL, then each marked block's, in request order."""
    return [model_input.system_ttl] + [b.ttl for b in model_input.blocks if b.breakpoint]


def wire(model_input) -> dict:
    return json.loads(RequestEncoder("claude-sonnet-5-5", 100).encode(model_input))


def controls(request: dict) -> list[dict]:
    found = [b["cache_control"] for b in request["system"] if "cache_control" in b]
    return found + [b["cache_control"] for m in request["messages"] for b in m["content"] if "cache_control" in b]


def without_controls(request: dict) -> dict:
    return {**request, "system": [{k: v for k, v in b.items() if k != "cache_control"} for b in request["system"]],
            "messages": [{**m, "content": [{k: v for k, v in b.items() if k != "cache_control"} for b in m["content"]]}
                         for m in request["messages"]]}


QUICK = [0, 1, 2, 3, 4]  # minutes: back and forth
SLOW = [0, 7, 15, 40, 52]  # ≥ 6 minutes apart, within the hour
HOURS = [0, 90, 200, 330]  # further apart than the 1-hour cache lives


@pytest.mark.parametrize("minutes, expected", [
    ([], Ttl.FIVE_MINUTES),
    ([4, 4, 4], Ttl.FIVE_MINUTES),
    ([6, 6, 6], Ttl.ONE_HOUR),
    ([1, 1, 20, 1, 1], Ttl.ONE_HOUR),  # a meeting inside a burst
    ([90, 120], Ttl.FIVE_MINUTES),  # neither cache survives: the cheaper writes win
    ([30, 90], Ttl.ONE_HOUR),  # one read at 0.1× against two writes: 0.1 + 2.0 < 1.25 + 1.25
])
def test_the_ttl_that_would_have_cost_least_over_the_recent_gaps_wins(minutes, expected):
    assert paced([m * MINUTE for m in minutes]) is expected


def test_only_the_most_recent_gaps_count():
    times = [0, 20 * MINUTE] + [20 * MINUTE + n * MINUTE for n in range(1, RECENT + 1)]
    assert len(gaps(times)) == RECENT and max(gaps(times)) == MINUTE  # the meeting fell out of the window
    assert paced(gaps(times)) is Ttl.FIVE_MINUTES
    assert paced(gaps(times[:-1])) is Ttl.ONE_HOUR


def test_an_earlier_breakpoint_is_never_shorter_lived_than_a_later_one():
    five, hour = Ttl.FIVE_MINUTES, Ttl.ONE_HOUR
    assert settled([five, hour, five]) == [hour, hour, five]
    assert settled([hour, five, five]) == [hour, five, five]
    assert settled([five, five]) == [five, five]
    assert settled([]) == []


def test_a_parent_whose_turns_come_six_minutes_apart_gets_the_hour_on_its_system_and_history():
    slow = parent_input(talk(SLOW))
    assert ttls(slow) == [Ttl.ONE_HOUR, Ttl.ONE_HOUR]
    assert controls(wire(slow)) == [{"type": "ephemeral", "ttl": "1h"}] * 2


def test_a_quick_parent_keeps_its_answered_history_an_hour_and_moves_on_five_minutes():
    quick = parent_input(talk(QUICK))
    assert ttls(quick) == [Ttl.ONE_HOUR, Ttl.ONE_HOUR, Ttl.FIVE_MINUTES]
    marked = [b for b in quick.blocks if b.breakpoint]
    assert marked[0].text == "answer 3" and marked[1].text.endswith("question 4")  # the history, the new turn
    assert controls(wire(quick))[-1] == {"type": "ephemeral"}  # the moving one: the API's default bytes


def test_a_session_whose_messages_come_hours_apart_keeps_nothing_an_hour():
    assert ttls(parent_input(talk(HOURS))) == [Ttl.FIVE_MINUTES] * 2
    assert ttls(parent_input(talk([0]))) == [Ttl.FIVE_MINUTES] * 2  # a first turn: no history to keep


def test_a_quick_fork_of_a_slow_parent_keeps_the_parent_prefix_for_an_hour_and_its_own_turns_five_minutes():
    parent = talk(SLOW)
    own = talk([60, 61, 62], session=9, author="UBOB0001")
    request = fork_input(fork(point=parent[-1].seq), parent, own)
    assert ttls(request) == [Ttl.ONE_HOUR, Ttl.ONE_HOUR, Ttl.ONE_HOUR, Ttl.FIVE_MINUTES]
    assert refusal(wire(request)) is None
    first = fork_input(fork(point=parent[-1].seq), parent, talk([60], session=9))  # its topic, waiting
    assert ttls(first) == [Ttl.ONE_HOUR, Ttl.ONE_HOUR, Ttl.FIVE_MINUTES]  # the inherited prefix is its history


def test_a_slow_fork_of_a_quick_parent_keeps_the_inherited_prefix_and_moves_on_the_hour():
    parent = talk(QUICK, waiting=False)
    own = talk([10, 20, 35], session=9)
    assert ttls(fork_input(fork(point=parent[-1].seq), parent, own)) == [Ttl.ONE_HOUR] * 3
    hours = talk(HOURS, waiting=False)  # a prefix whose channel never came back within the hour
    assert ttls(fork_input(fork(point=hours[-1].seq), hours, talk([400], session=9))) == [Ttl.FIVE_MINUTES] * 3


def test_a_fork_of_a_fork_keeps_the_latest_breakpoints_the_api_allows_and_the_order_rule_holds():
    channel, middle = talk(SLOW, waiting=False), talk([60, 61, 62], session=7, waiting=False)
    own = talk([70, 71], session=9)
    top = fork(point=channel[-1].seq, fork_id=7, number=2)
    child = fork(point=middle[-1].seq, parent_id=7, depth=2)
    request = fork_input(child, channel, own, ancestors=[(top, middle)])
    # the channel's prefix end, the parent fork's, the fork's own history and its new turn: four, and the
    # system prompt's makes five, so the oldest goes (the parent fork's entry holds the channel's prefix)
    assert ttls(request) == [Ttl.ONE_HOUR, Ttl.ONE_HOUR, Ttl.ONE_HOUR, Ttl.FIVE_MINUTES]
    assert refusal(wire(request)) is None


@pytest.mark.parametrize("mode, expected", [(CacheMode.FIVE_MINUTES, {"type": "ephemeral"}),
                                            (CacheMode.ONE_HOUR, {"type": "ephemeral", "ttl": "1h"})])
def test_a_fixed_mode_gives_every_breakpoint_its_ttl_whatever_the_pace(mode, expected):
    parent = talk(SLOW)
    builders = [
        parent_input(parent, cache=mode), parent_input(talk(QUICK), cache=mode),
        fork_input(fork(point=parent[-1].seq), parent, talk([60, 61], session=9), cache=mode),
        with_request(fork_input(fork(point=parent[-1].seq), parent, talk([60], session=9), cache=mode),
                     merge_prompt("U1", "")),
        compaction_input(parent, mode),
    ]
    for request in builders:
        assert set(map(json.dumps, controls(wire(request)))) == {json.dumps(expected)}


def test_a_merge_or_compaction_prompt_read_once_is_cached_five_minutes_after_an_hour_long_prefix():
    parent = talk(SLOW)
    merge = with_request(fork_input(fork(point=parent[-1].seq), parent, talk([60, 70, 80], session=9)),
                         merge_prompt("U1", ""))
    assert ttls(merge)[-1] is Ttl.FIVE_MINUTES and Ttl.ONE_HOUR in ttls(merge)
    assert refusal(wire(merge)) is None
    compaction = compaction_input(parent)
    assert ttls(compaction) == [Ttl.ONE_HOUR, Ttl.FIVE_MINUTES]
    assert refusal(wire(compaction)) is None


def test_an_unanswered_note_keeps_the_sessions_own_pace():
    parent = talk(SLOW, waiting=False)  # ends with an answer: asking() adds the note after it
    assert ttls(asking(parent_input(parent)))[-1] is Ttl.ONE_HOUR


def test_the_ttl_changes_no_byte_of_the_prefix_but_the_ttl_itself():
    parent = talk(SLOW)
    own = talk([60, 61], session=9)
    requests = [wire(fork_input(fork(point=parent[-1].seq), parent, own, cache=mode)) for mode in CacheMode]
    assert len({json.dumps(without_controls(r), sort_keys=True) for r in requests}) == 1
    assert len({json.dumps(controls(r)) for r in requests}) == 3  # auto here is 1h, 1h, 1h, 5m: unlike either


def test_messages_without_a_slack_timestamp_or_by_nobody_do_not_set_the_pace():
    turns = talk(SLOW)
    unstamped = [Turn(t.session_id, t.seq, t.role, t.text, t.author_id, t.author_name, t.status) for t in turns]
    assert ttls(parent_input(unstamped))[-1] is Ttl.FIVE_MINUTES  # pace unknown: the moving one, 5 minutes
    summaries = [Turn(1, n, Role.SUMMARY, "merged", slack_ts=f"{DAY_START + n * 600}") for n in range(1, 6)]
    assert ttls(parent_input(summaries)) == [Ttl.FIVE_MINUTES] * 2
