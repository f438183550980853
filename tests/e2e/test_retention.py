"""THREADFORK_RETENTION through the real app and the fakes, with a controllable clock: the sweep deletes
what is older — turns, summaries, closed forks — for real, and the conversations go on with a note."""
import pytest
from sqlalchemy import func, select

from bot.store.tables import messages, sessions, turns

from ..fakes.anthropic_api import request_texts
from ..harness import CHANNEL

NOTE = "[Earlier turns of this conversation were removed under the workspace's retention policy.]"


def mention(bot, text):
    bot.say("UALICE01", text, mention=True)
    bot.settled()


def open_fork(bot, number, topic):
    bot.slash("/fork", topic)
    root = bot.fork_root(number)
    bot.settled()
    return root


@pytest.mark.settings(threadfork_retention="3d")
def test_after_the_retention_the_sweep_deletes_old_turns_and_forks_and_each_session_goes_on_with_a_note(
        bot, slack, claude):
    mention(bot, "an old question")
    merged = open_fork(bot, 1, "an old idea")
    bot.react("UBOB0001", merged)
    bot.settled()
    still_open = open_fork(bot, 2, "a long-running side topic")
    bot.clock.advance(days=2)
    mention(bot, "a recent question")
    bot.clock.advance(days=2)

    bot.services.sweep()

    mention(bot, "and now?")
    parent_request = request_texts(claude.requests[-1])
    assert parent_request[1] == NOTE and parent_request.count(NOTE) == 1
    assert not [t for t in parent_request if "an old" in t or "Summary" in t]
    assert [t for t in parent_request if "a recent question" in t] and "and now?" in parent_request[-1]
    bot.say("UBOB0001", "still here?", thread_ts=still_open)
    bot.settled()
    fork_request = request_texts(claude.requests[-1])
    assert fork_request[1] == NOTE and fork_request.count(NOTE) == 1
    assert "background from the channel" in fork_request[2] and "still here?" in fork_request[-1]
    assert not [t for t in fork_request if "<@UALICE01>" in t]  # its first turn (the topic) was old
    assert slack.posts(CHANNEL, top_level=False)[-1].shown.startswith("Answer")  # answered, not refused

    with bot.db.engine.connect() as conn:  # deleted, not flagged
        texts = conn.scalars(select(turns.c.text)).all()
        assert not [t for t in texts if "an old" in t or "long-running side topic" in t]
        assert conn.scalar(select(func.count()).select_from(sessions).where(sessions.c.number == 1)) == 0
        assert conn.scalar(select(func.count()).select_from(messages).where(messages.c.ts == merged)) == 0
        assert conn.scalar(select(sessions.c.pruned_before_seq).where(sessions.c.kind == "parent")) > 1


def test_without_a_retention_the_sweep_deletes_nothing(bot, slack, claude):
    mention(bot, "an old question")
    bot.clock.advance(days=3650)
    bot.services.sweep()
    mention(bot, "still there?")
    request = request_texts(claude.requests[-1])
    assert NOTE not in request and [t for t in request if "an old question" in t]
