"""Forget means forgotten, everywhere (issue 19): after `/threadfork forget`, an uninstall's sweep, a
`tokens_revoked` sweep or a retention prune, no column of any table — the schema reflected, slack-sdk's
tables and the durable inbox included — holds the words of the affected messages or Claude's answers to
them. Each test first proves the words were stored (so the scan can fail), on SQLite and PostgreSQL."""
import uuid
from datetime import timedelta

import pytest
from sqlalchemy import func, select

from bot.domain.model import ForkStatus
from bot.store.tables import inbox

from ..fakes.anthropic_api import Script
from ..harness import CHANNEL, GENERAL, RunningBot, wait_until
from ..leftovers import holding
from .test_channel_settings import admin


@pytest.fixture
def running(slack, claude, migrated_url):
    bots = []

    def start(**settings) -> RunningBot:
        bots.append(RunningBot(slack, claude, migrated_url, **settings))
        return bots[-1]

    yield start
    for bot in bots:
        bot.stop()


def converse(bot, slack, claude, migrated_url) -> list[str]:
    """A mention, a fork with a topic, a turn in it, each answered, and an entry of the channel's memory: unique
    words in each, all stored."""
    words = [f"{part}-{uuid.uuid4().hex[:10]}" for part in ("mention", "topic", "forkturn", "answer", "memory")]
    mention, topic, fork_turn, answer, remembered = words
    claude.script(*[Script(text=f"Claude says {answer} ({n})") for n in range(3)])
    bot.say("UALICE01", f"please keep {mention}", mention=True)
    wait_until(lambda: len(claude.requests) >= 1, message="the parent's answer")
    bot.settled()
    bot.slash("/fork", f"about {topic}")
    root = bot.fork_root(1)
    wait_until(lambda: len(claude.requests) >= 2, message="the topic's answer")
    bot.settled()
    bot.say("UBOB0001", f"and {fork_turn}", thread_ts=root)
    wait_until(lambda: len(claude.requests) >= 3, message="the fork turn's answer")
    bot.settled()
    bot.say("UALICE01", f"remember {remembered}", mention=True)  # the channel's memory (issue 37)
    wait_until(lambda: any(remembered in p.get("text", "") for p in slack.posts(CHANNEL)), message="remembered")
    wait_until(lambda: undone(bot) == 0, message="every delivery processed")
    assert set(holding(migrated_url, *words)) == set(words)  # stored: the scan below can fail
    return words


def undone(bot) -> int:
    with bot.db.engine.connect() as conn:
        return conn.scalar(select(func.count()).select_from(inbox).where(inbox.c.done_at.is_(None)))


def test_after_a_forget_no_table_holds_the_channels_words(running, slack, claude, migrated_url):
    bot = running()
    words = converse(bot, slack, claude, migrated_url)
    user = admin(slack)
    bot.slash("/threadfork", "forget", user=user)
    [question] = wait_until(lambda: [r for r in slack.responses if r.get("blocks") and "forget" in r["text"]])
    bot.click("threadfork_forget", question["blocks"][-1]["elements"][0]["value"], user=user)
    wait_until(lambda: any("made Threadfork forget" in p.get("text", "") for p in slack.posts(CHANNEL)))
    bot.settled()
    wait_until(lambda: undone(bot) == 0, message="the forget's delivery done")
    assert holding(migrated_url, *words) == {}


@pytest.mark.parametrize("leaving", ["uninstall", "tokens_revoked"])
def test_after_a_workspace_leaves_and_is_swept_at_once_no_table_holds_its_words(running, slack, claude, migrated_url,
                                                                                leaving):
    """An uninstall, or the bot's token revoked: either is a departure, and the sweep deletes the same."""
    bot = running(threadfork_retention_after_uninstall="0")
    words = converse(bot, slack, claude, migrated_url)
    assert getattr(bot, leaving)().status == 200
    wait_until(lambda: bot.store.departures.departed_before(bot.clock() + timedelta(seconds=1)), message="departure")
    wait_until(lambda: undone(bot) == 0, message="the departure's deliveries done")
    bot.services.sweep()
    assert holding(migrated_url, *words) == {}


def test_after_a_retention_prune_no_table_holds_the_old_words_and_the_open_fork_shows_its_number_alone(
        running, slack, claude, migrated_url):
    bot = running(threadfork_retention="3d")
    words = converse(bot, slack, claude, migrated_url)
    bot.clock.advance(days=4)
    bot.services.sweep()
    assert holding(migrated_url, *words) == {}
    fork = bot.store.sessions.fork_by_number(GENERAL, 1)
    assert fork.status is ForkStatus.OPEN and fork.topic == "" and fork.label == "#1"
