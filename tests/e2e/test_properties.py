"""Property-based: random interleavings of parent turns, forks, fork turns, merges, abandons,
redeliveries and model failures keep the invariants — no turn lost, no reply doubled, at most one
merge per fork, the parent never holds a fork's turns."""
import itertools
import tempfile
from pathlib import Path

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from ..fakes.anthropic_api import Script, is_merge_request, request_texts
from ..harness import GENERAL, RunningBot

USERS = ["UALICE01", "UBOB0001", "UCAROL01"]

actions = st.lists(st.one_of(
    st.tuples(st.just("parent"), st.sampled_from(USERS)),
    st.tuples(st.just("fork"), st.sampled_from(["--fresh", "--inherit"])),
    st.tuples(st.just("fork_turn"), st.integers(1, 3), st.sampled_from(USERS)),
    st.tuples(st.just("merge"), st.integers(1, 3), st.sampled_from(["react", "slash", "mention"])),
    st.tuples(st.just("abandon"), st.integers(1, 3)),
    st.tuples(st.just("redeliver"), st.just(0)),
    st.tuples(st.just("fail_next"), st.just(0)),
), min_size=3, max_size=10)


@settings(max_examples=12, deadline=None, suppress_health_check=list(HealthCheck))
@given(steps=actions)
def test_random_interleavings_keep_the_invariants(slack, claude, steps):
    with tempfile.TemporaryDirectory() as tmp:
        bot = RunningBot(slack, claude, f"sqlite:///{Path(tmp) / 'p.db'}")
        try:
            slack.reset(), claude.reset()
            run(bot, slack, claude, steps)
        finally:
            bot.stop()


def run(bot, slack, claude, steps):
    words = (f"w{n}" for n in itertools.count())
    fork_words, parent_words, last_event = set(), set(), None
    for step in steps:
        kind = step[0]
        if kind == "parent":
            word = next(words)
            parent_words.add(word)
            bot.say(step[1], f"parent {word}", mention=True)
        elif kind == "fork":
            bot.slash("/fork", step[1])
        elif kind in ("fork_turn", "merge", "abandon"):
            fork = bot.store.sessions.fork_by_number(GENERAL, step[1])
            if fork is None or fork.root_ts is None:
                continue
            if kind == "fork_turn":
                word = next(words)
                fork_words.add(word)
                bot.say(step[2], f"fork {word}", thread_ts=fork.root_ts)
            elif kind == "abandon":
                bot.react("UALICE01", fork.root_ts, "x")
            elif step[2] == "react":
                last_event = f"EvM{fork.id}"
                bot.react("UBOB0001", fork.root_ts, event_id=last_event)
            elif step[2] == "slash":
                bot.slash("/merge", str(fork.number))
            else:
                bot.say("UCAROL01", "merge", thread_ts=fork.root_ts, mention=True)
        elif kind == "redeliver" and last_event:
            bot.react("UBOB0001", "0.0", event_id=last_event)
        elif kind == "fail_next":
            claude.script(*[Script(status=529, error_type="overloaded_error")] * 3)
        bot.settled()
    bot.settled()
    check(bot, claude, parent_words, fork_words)


def check(bot, claude, parent_words, fork_words):
    from sqlalchemy import text

    with bot.db.engine.connect() as conn:
        rows = conn.execute(text("SELECT session_id, role, status, text, slack_ts FROM turns ORDER BY session_id, seq"))
        turns = [dict(r._mapping) for r in rows]
        forks = [dict(r._mapping) for r in conn.execute(text("SELECT id, status FROM sessions WHERE kind='fork'"))]
    user_ts = [t["slack_ts"] for t in turns if t["role"] == "user" and t["slack_ts"]]
    assert len(user_ts) == len(set(user_ts))  # no message stored twice
    stored = {t["text"].split(" ", 1)[-1] for t in turns if t["role"] == "user"}
    assert parent_words <= stored  # no parent turn lost
    assert all(t["status"] in ("answered", "failed") for t in turns if t["role"] == "user")
    for session in {t["session_id"] for t in turns}:
        roles = [t["role"] for t in turns if t["session_id"] == session
                 and (t["role"] == "user" or (t["role"] == "assistant" and t["status"] == "complete"))]
        assert "assistant,assistant" not in ",".join(roles)  # no reply doubled
    merges = [r for r in claude.requests if is_merge_request(r)]
    summaries = [t for t in turns if t["role"] == "summary"]
    assert len(summaries) == sum(1 for f in forks if f["status"] == "merged")
    assert len(merges) >= len(summaries) and len(summaries) <= len(forks)
    for request in claude.requests:
        if any(t.endswith(tuple(f"parent {w}" for w in parent_words)) for t in request_texts(request)[-1:]):
            assert not any(f"fork {w}" in t for t in request_texts(request) for w in fork_words)
