"""The bench's baseline bot (`python -m bench.baseline`) answers as the bench assumes it does, so its
figures compare Threadfork with a bot that works: top level by post and edit, threads by stream."""
import time

from ..fakes.anthropic_api import Script
from ..harness import wait_until
from ..processes import BotProcess

CHANNEL = "C0BASELINE1"


def mention(bot: BotProcess, n: int, text: str, thread_ts: str | None = None) -> None:
    ts = f"1700000{n:03d}.000100"
    event = {"type": "app_mention", "channel": CHANNEL, "user": "UALICE01", "text": f"<@UBOT0001> {text}",
             "ts": ts, "event_ts": ts, "team": "T0TEAM001", **({"thread_ts": thread_ts} if thread_ts else {})}
    assert bot.event(event, f"EvBASE{n:04d}") == 200


def message(bot: BotProcess, n: int, text: str, thread_ts: str) -> None:
    ts = f"1700000{n:03d}.000100"
    assert bot.event({"type": "message", "channel": CHANNEL, "channel_type": "channel", "user": "UALICE01",
                      "text": text, "ts": ts, "event_ts": ts, "team": "T0TEAM001", "thread_ts": thread_ts},
                     f"EvBASE{n:04d}") == 200


def test_the_baseline_posts_at_top_level_streams_in_threads_and_remembers_each_conversation(
        tmp_path, slack, claude):
    bot = BotProcess(tmp_path, slack, claude, module="bench.baseline")
    try:
        bot.wait_healthy(timeout=30)
        claude.script(Script(text="top-level answer", chunks=3, chunk_delay=0.6))
        mention(bot, 1, "first question")
        top = wait_until(lambda: [m for m in slack.posts(CHANNEL, top_level=True)
                                  if m.shown == "top-level answer"], timeout=15)
        assert top[0].method == "chat.postMessage" and slack.calls_to("chat.update")  # posted, then edited

        root = "1699999999.000100"  # someone's message the bot has not seen
        mention(bot, 2, "thread question", thread_ts=root)
        wait_until(lambda: slack.counts.get("chat.stopStream") == 1, timeout=15)
        start = slack.calls_to("chat.startStream")[0]
        assert (start["thread_ts"], start["recipient_user_id"], start["recipient_team_id"]) == (
            root, "UALICE01", "T0TEAM001")

        message(bot, 3, "follow-up without a mention", thread_ts=root)
        wait_until(lambda: slack.counts.get("chat.stopStream") == 2, timeout=15)
        assert [m["content"] for m in claude.requests[-1]["messages"]] == [
            "thread question", "Answer 2", "follow-up without a mention"]

        message(bot, 4, "a thread the bot is not in", thread_ts="1699999998.000100")
        # the baseline bot records nothing and ignores this on its listener pool: no signal says it is
        # done, so a moment's wait stands in for one
        time.sleep(0.5)
        assert len(claude.requests) == 3
    finally:
        bot.stop()
