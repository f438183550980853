"""A reply whose model call completed is recorded once (issue 34): a PostgreSQL outage of 6 s, or a full disk
under SQLite, while it streams delays its record (retried until the store takes it) but never calls Claude again
for it, and nobody is told it was interrupted."""
import threading

import pytest

from bot.services.lifecycle import INTERRUPTED

from ..fakes.anthropic_api import Script
from ..harness import CHANNEL, GENERAL, wait_until
from .test_outages import fill, mention, postgres_behind_a_proxy, replies, sqlite_on_a_small_filesystem  # noqa: F401

pytestmark = pytest.mark.timeout(120)
SLOW = Script(text="Answer written across an outage", usage={"input_tokens": 1_000, "output_tokens": 50},
              chunk_delay=0.5)  # four chunks: ~2 s of streaming


def back_in(seconds: float, restore) -> threading.Event:
    """The store comes back after `seconds` (the event is set once it has)."""
    back = threading.Event()
    threading.Timer(seconds, lambda: (restore(), back.set())).start()
    return back


def answered_once(bot, slack, claude, back: threading.Event) -> None:
    assert back.wait(15)
    wait_until(lambda: replies(slack) and not bot.busy(), timeout=40, message="the answer recorded")
    bot.settled(timeout=40)
    bot.services.sweep()  # what a sweep finds afterwards: nothing to take over, nothing to answer again
    bot.settled(timeout=40)
    assert len(claude.requests) == 1
    assert len(replies(slack)) == 1
    assert not [p for p in slack.posts(CHANNEL) if INTERRUPTED in p.shown]
    turns = bot.store.turns.turns(bot.store.sessions.parent_id(GENERAL))
    assert [(t.role.value, t.status.value) for t in turns] == [("user", "answered"), ("assistant", "complete")]
    assert turns[-1].text.startswith("Answer written across an outage")


@pytest.mark.postgres
def test_a_reply_streaming_across_a_six_second_postgresql_outage_is_recorded_once_with_one_model_call(
        postgres_behind_a_proxy, slack, claude):  # noqa: F811
    bot, proxy = postgres_behind_a_proxy
    claude.script(SLOW)
    assert bot.event(mention(bot.new_ts()), event_id="EvSTREAM1").status == 200
    wait_until(lambda: claude.requests, message="the model call")
    proxy.cut()
    answered_once(bot, slack, claude, back_in(6.0, proxy.restore))


def test_a_reply_streaming_while_the_disk_fills_is_recorded_once_with_one_model_call(
        sqlite_on_a_small_filesystem, slack, claude):  # noqa: F811
    bot, filler = sqlite_on_a_small_filesystem
    claude.script(SLOW)
    assert bot.event(mention(bot.new_ts()), event_id="EvSTREAM2").status == 200
    wait_until(lambda: claude.requests, message="the model call")
    fill(filler)
    answered_once(bot, slack, claude, back_in(6.0, filler.unlink))
