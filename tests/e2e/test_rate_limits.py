"""Slack's rate limits met end to end (the fake Slack enforces each method's tier per workspace, always): the
bot stays inside them and degrades visibly rather than failing — a stream start Slack refuses becomes a
posted-and-updated answer at once, many top-level answers at once share chat.update's tier, and a long thread
adopted under a non-Marketplace app's limits (once a minute, 15 a page) is read whole while the thread is told
the bot is still reading."""
from slack_sdk import WebClient

from ..fakes.anthropic_api import Script, request_texts
from ..fakes.slack_api import BOT_TOKEN
from ..fakes.slack_rates import RateClock
from ..harness import CHANNEL, GENERAL, wait_until
from .test_slack_failures import ANSWER, SCRIPT, ask, assert_shown_once, messages_in, open_fork


def ratelimited(slack, method: str) -> list:
    return [r for r in slack.refusals if r.method == method and r.error == "ratelimited"]


def test_a_stream_start_refused_by_its_tier_is_posted_and_updated_at_once_with_nothing_lost(bot, slack, claude):
    thread_ts = open_fork(bot)
    other_process = WebClient(token=BOT_TOKEN, base_url=slack.api_url)  # the workspace's 20 this minute, spent
    for _ in range(20):
        other_process.chat_startStream(channel=CHANNEL, thread_ts=thread_ts, markdown_text="elsewhere",
                                       recipient_team_id="T0TEAM001", recipient_user_id="UALICE01")
    claude.script(SCRIPT)
    ask(bot, thread_ts)
    wait_until(lambda: [m for m in messages_in(slack, thread_ts) if m.method == "chat.postMessage"], timeout=5,
               message="the answer posted instead of streamed")
    bot.settled()
    assert len(ratelimited(slack, "chat.startStream")) == 1  # refused once; Retry-After is not waited out
    answer = [m for m in messages_in(slack, thread_ts) if "elsewhere" not in (m.shown or m.get("text") or "")]
    assert "".join(m.shown or m.get("text") or "" for m in answer) == ANSWER and answer[0].updates


def test_many_top_level_answers_at_once_in_one_workspace_stay_inside_chat_updates_tier(bot, slack, claude):
    channels = [f"C0BUSY{n:05d}" for n in range(8)]  # one channel each: chat.postMessage's limit is per channel
    words = " ".join(f"word{n}" for n in range(40))
    claude.default_script = Script(text=words, chunks=40, chunk_delay=0.25)  # each answer writes for 10 s
    for channel in channels:
        bot.say("UBOB0001", "a long answer please", channel=channel, mention=True)
    wait_until(lambda: all(p.shown == words or p.get("text") == words for c in channels
                           for p in slack.posts(c, top_level=True)) and all(slack.posts(c, top_level=True)
                                                                            for c in channels),
               timeout=60, message="eight whole answers")
    bot.settled()
    assert ratelimited(slack, "chat.update") == []  # without pacing: 8 answers × 10 updates in 10 s, over 50
    updates = slack.calls_to("chat.update")
    assert len(updates) <= 8 + 45 * (updates[-1].at - updates[0].at) / 60 + 8  # interim + finals, both bounded


def test_a_long_thread_adopted_under_the_non_marketplace_limits_is_read_whole_while_the_thread_is_told(
        bot, slack, claude):
    slack.rates.non_marketplace = True
    # a minute of the fake's passes in 3 s (Retry-After says 3) so reading 3 pages takes seconds, not minutes
    slack.rates.clock = RateClock(speed=20)
    slack.names.update({"UALICE01": "alice", "UBOB0001": "bob"})
    root = bot.say("UALICE01", "which database for the ledger?")
    for n in range(40):  # written before the bot was around: only Slack's history has them
        ts = bot.new_ts()
        slack.record_message({"type": "message", "channel": CHANNEL, "user": "UBOB0001", "text": f"point {n}",
                              "ts": ts, "thread_ts": root})
    bot.say("UALICE01", "what do you make of all this?", thread_ts=root, mention=True)
    wait_until(lambda: [p for p in messages_in(slack, root) if p.get("text", "").startswith("🧵")], timeout=40,
               message="the adoption note")
    wait_until(lambda: len(claude.requests) == 1, timeout=20, message="the answer's request")
    bot.settled()
    reads = slack.calls_to("conversations.replies")
    assert len(reads) >= 3 and {r["latest"] for r in reads} == {reads[0]["latest"]}  # pages up to the mention
    assert len(ratelimited(slack, "conversations.replies")) >= 2  # each later page waited out Retry-After
    said = [p.get("text") or "" for p in messages_in(slack, root)]
    assert said[0].startswith("📖 I'm still reading") and said[1].startswith("🧵 This thread is now fork #1")
    texts = "\n".join(request_texts(claude.requests[0]))
    assert all(f"point {n}\n" in texts + "\n" for n in range(40)) and "which database for the ledger?" in texts
    assert bot.store.sessions.fork_by_number(GENERAL, 1).adopted
