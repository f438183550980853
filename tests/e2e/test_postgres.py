"""The same product on PostgreSQL: a fork's whole life, and a merge raced by three gestures."""
import pytest

from ..fakes.anthropic_api import Script, is_merge_request, request_texts
from ..harness import CHANNEL, at_once, wait_until

pytestmark = pytest.mark.postgres


def test_parent_fork_and_merge_work_the_same_on_postgresql(pg_bot, slack, claude):
    bot = pg_bot
    bot.say("UALICE01", "parent question", mention=True)
    wait_until(lambda: slack.posts(CHANNEL, top_level=True))
    bot.slash("/fork", "side question")
    root = bot.fork_root()
    wait_until(lambda: slack.posts(CHANNEL, top_level=False))
    claude.script(Script(text="PG SUMMARY", chunk_delay=0.05))
    gestures = [lambda: bot.react("UCAROL01", root), lambda: bot.react("UBOB0001", root),
                lambda: bot.slash("/merge", "1", user="UALICE01")]
    at_once(*gestures)
    wait_until(lambda: [p for p in slack.posts(CHANNEL, top_level=True) if "merged fork" in p.get("text", "")])
    bot.settled()
    assert sum(1 for r in claude.requests if is_merge_request(r)) == 1
    bot.say("UALICE01", "and now?", mention=True)
    wait_until(lambda: not is_merge_request(claude.requests[-1]) and len(claude.requests) == 4)
    texts = request_texts(claude.requests[-1])
    assert any(t.endswith("\nPG SUMMARY") for t in texts)
    assert not any("side question" in t for t in texts[:-1] if not t.startswith("[Merged fork"))
