"""Fork lifecycle and context budget, driven by a controllable clock (no sleeping): reminders,
expiry, compaction, budgets, `/context`, the merge policy and retries."""
import pytest

from ..fakes.anthropic_api import Script, is_merge_request, request_texts
from ..harness import CHANNEL, GENERAL, RunningBot, wait_until
from ..merges import begin_merge


def talk_in_fork(bot, slack, text="an idea", topic="idle topic"):
    bot.slash("/fork", topic)
    root = bot.fork_root()
    bot.settled()
    bot.say("UBOB0001", text, thread_ts=root)
    bot.settled()
    return root


def reminders(slack, root):
    return [m for m in slack.posts(CHANNEL, top_level=False) if m.get("thread_ts") == root and "quiet" in m.get("text", "")]


def summaries(slack):
    return [p for p in slack.posts(CHANNEL, top_level=True) if "merged" in p.get("text", "") and p.get("blocks")
            and p["blocks"][0]["type"] == "section" and "fork #" in p["text"]]


def test_an_idle_fork_gets_one_reminder_in_its_thread_with_buttons(bot, slack, claude):
    root = talk_in_fork(bot, slack)
    bot.clock.advance(hours=23)
    bot.services.sweep()
    assert reminders(slack, root) == []
    bot.clock.advance(hours=2)
    bot.services.sweep()
    bot.services.sweep()
    [reminder] = reminders(slack, root)
    assert [e["text"]["text"] for e in reminder["blocks"][1]["elements"]] == ["Merge", "Abandon"]
    assert "7 days" in reminder["text"]
    assert not slack.calls_to("chat.postEphemeral")


def test_two_sweepers_on_one_database_remind_and_expire_once(bot, slack, claude, migrated_sqlite_url):
    root = talk_in_fork(bot, slack)
    other = RunningBot(slack, claude, migrated_sqlite_url, clock=bot.clock)
    try:
        bot.clock.advance(hours=25)
        bot.services.sweep(), other.services.sweep()
        assert len(reminders(slack, root)) == 1
        bot.clock.advance(days=7)
        import threading
        threads = [threading.Thread(target=b.services.sweep) for b in (bot, other, bot)]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
        bot.settled()
        assert sum(1 for r in claude.requests if is_merge_request(r)) == 1
        assert len(summaries(slack)) == 1
    finally:
        other.stop()


def test_after_the_expiry_a_fork_is_merged_like_any_merge(bot, slack, claude):
    talk_in_fork(bot, slack)
    bot.clock.advance(days=7, seconds=1)
    bot.services.sweep()
    [post] = wait_until(lambda: summaries(slack))
    assert "Threadfork merged idle fork #1" in post["text"] and "thread_ts" not in post.args
    fork = bot.store.sessions.fork_by_number(GENERAL, 1)
    assert fork.status.value == "merged"
    assert [t.role.value for t in bot.store.turns.turns(fork.parent_id)] == ["summary"]


def test_an_idle_fork_nobody_wrote_in_is_closed_at_expiry_not_retried_every_sweep(bot, slack, claude):
    bot.slash("/fork", "--fresh")  # a topic would be its first turn
    root = bot.fork_root()
    bot.settled()
    bot.clock.advance(days=7, seconds=1)
    bot.services.sweep()
    fork = bot.store.sessions.fork_by_number(GENERAL, 1)
    assert fork.status.value == "abandoned" and not claude.requests
    assert bot.store.turns.turns(fork.parent_id) == []  # nothing was added to the channel's conversation
    notes = [m for m in slack.posts(CHANNEL, top_level=False) if m.get("thread_ts") == root]
    assert any("closed after sitting idle" in m.get("text", "") for m in notes)
    calls = len(slack.calls)
    bot.services.sweep()
    assert len(slack.calls) == calls


@pytest.mark.settings(threadfork_fork_expiry_policy="abandon")
def test_under_the_abandon_policy_expiry_calls_no_model_and_neither_do_later_messages(bot, slack, claude):
    root = talk_in_fork(bot, slack)
    calls = len(claude.requests)
    bot.clock.advance(days=8)
    bot.services.sweep()
    assert bot.store.sessions.fork_by_number(GENERAL, 1).status.value == "abandoned"
    bot.say("UBOB0001", "anyone?", thread_ts=root)
    wait_until(lambda: slack.calls_to("chat.postEphemeral"))
    bot.settled()
    assert len(claude.requests) == calls
    assert "Abandoned" in str(slack.calls_to("chat.update")[-1]["blocks"])


def test_a_fork_that_became_active_again_is_not_expired(bot, slack, claude):
    root = talk_in_fork(bot, slack)
    bot.clock.advance(days=6)
    bot.say("UBOB0001", "still on it", thread_ts=root)
    bot.settled()
    bot.clock.advance(days=2)
    bot.services.sweep()
    assert bot.store.sessions.fork_by_number(GENERAL, 1).status.value == "open"
    assert not any(is_merge_request(r) for r in claude.requests)


def test_a_summary_whose_post_failed_is_announced_once_by_the_sweep(bot, slack, claude):
    root = talk_in_fork(bot, slack)
    claude.script(Script(text="THE SUMMARY"))
    slack.fail("chat.postMessage", "ratelimited", times=50, status=429, retry_after=0)
    bot.react("UCAROL01", root)
    wait_until(lambda: bot.store.sessions.fork_by_number(GENERAL, 1).status.value == "merged")
    bot.settled()  # the SDK's rate-limit retries give up
    slack.clear_failures()
    assert summaries(slack) == []
    bot.services.sweep()  # the merge lease has not expired: nobody takes over yet
    assert summaries(slack) == []
    bot.clock.advance(minutes=16)  # past THREADFORK_LEASE (15 minutes by default)
    bot.services.sweep()
    bot.services.sweep()
    [post] = summaries(slack)
    assert post["blocks"][1]["text"] == "THE SUMMARY"
    assert sum(1 for r in claude.requests if is_merge_request(r)) == 1


def test_a_merge_left_in_merging_is_finished_by_the_sweep(bot, slack, claude):
    talk_in_fork(bot, slack)
    fork = bot.store.sessions.fork_by_number(GENERAL, 1)
    assert begin_merge(bot.store, fork.id, "UCAROL01", "worker", 600)  # a worker claimed it, then died
    bot.services.sweep()
    assert not any(is_merge_request(r) for r in claude.requests)
    bot.clock.advance(minutes=11)
    bot.services.sweep()
    [post] = summaries(slack)
    assert "<@UCAROL01> merged fork #1" in post["text"]


@pytest.mark.settings(threadfork_compact_at=5_000)
def test_a_parent_over_its_budget_is_compacted_keeping_recent_turns_verbatim(bot, slack, claude):
    for n in range(5):
        claude.script(Script(text=f"reply {n}", usage={"input_tokens": 800 * (n + 1)}))  # under 5,000
        bot.say("UALICE01", f"constraint {n}: keep it under {n} ms", mention=True)
        bot.settled()
    bot.slash("/fork", "--inherit side")
    root = bot.fork_root()
    bot.settled()
    fork_before = request_texts(claude.requests[-1])
    claude.script(Script(text="big reply", usage={"input_tokens": 6_000}),
                  Script(text="COMPACTED: constraints 0-4 kept verbatim", usage={"output_tokens": 300}))
    bot.say("UALICE01", "push it over", mention=True)
    wait_until(lambda: any("[Compaction request]" in str(r["messages"][-1]) for r in claude.requests))
    bot.settled()
    compaction = next(r for r in claude.requests if "[Compaction request]" in str(r["messages"][-1]))
    bot.say("UALICE01", "after compaction", mention=True)
    bot.settled()
    texts = request_texts(claude.requests[-1])
    assert any(t.endswith("COMPACTED: constraints 0-4 kept verbatim") for t in texts)
    assert not any("constraint 0" in t for t in texts)  # the oldest turns were replaced
    for n in range(5):  # every stated constraint went into the compaction or stayed verbatim
        assert any(f"constraint {n}: keep it under {n} ms" in t for t in request_texts(compaction) + texts)
    assert texts[-3:] == ["[person-ce01 <@UALICE01>]\npush it over", "big reply",
                          "[person-ce01 <@UALICE01>]\nafter compaction"]
    bot.say("UBOB0001", "fork still sees what it inherited", thread_ts=root)
    bot.settled()
    fork_after = request_texts(claude.requests[-1])
    assert fork_after[: len(fork_before)] == fork_before
    assert sum(1 for r in claude.requests if "[Compaction request]" in str(r["messages"][-1])) == 1


@pytest.mark.settings(threadfork_fork_token_budget=1_000)
def test_a_fork_past_its_budget_says_so_and_asks_to_merge_abandon_or_continue(bot, slack, claude):
    claude.script(Script(text="expensive", usage={"input_tokens": 1_500}))
    # no topic: a topic would be the fork's first turn, and whether "an idea" arrived before or after
    # that answer used up the budget would decide whether it too is refused
    root = talk_in_fork(bot, slack, topic="--fresh")
    # the notice follows the answer (after its lease is released): quiet for a moment is not yet posted
    [notice] = wait_until(lambda: [m for m in slack.posts(CHANNEL, top_level=False) if "budget" in m.get("text", "")],
                          message="the budget notice")
    assert [e["text"]["text"] for e in notice["blocks"][1]["elements"]] == ["Merge", "Abandon", "Continue"]
    calls = len(claude.requests)
    kept_ts = bot.say("UBOB0001", "one more?", thread_ts=root)
    wait_until(lambda: slack.calls_to("chat.postEphemeral"))
    bot.settled()
    found = slack.calls_to("chat.postEphemeral")
    assert len(found) == 1, [c.args for c in found]  # once, for this message
    [refusal] = found
    assert "budget" in refusal["text"] and refusal["thread_ts"] == root and len(claude.requests) == calls
    fork = bot.store.sessions.fork_by_number(GENERAL, 1)
    bot.click("fork_budget_continue", str(fork.id), user="UBOB0001")
    wait_until(lambda: [m for m in slack.posts(CHANNEL, top_level=False) if "raised" in m.get("text", "")])
    bot.react("UBOB0001", kept_ts, "repeat")
    wait_until(lambda: len(claude.requests) == calls + 1)
    assert request_texts(claude.requests[-1])[-1].endswith("\none more?")


def test_slash_context_reports_size_budget_merged_forks_and_tokens_kept_out(bot, slack, claude):
    bot.say("UALICE01", "parent", mention=True)
    bot.settled()
    claude.script(Script(text="fork reply", usage={"input_tokens": 80_000, "output_tokens": 500}),
                  Script(text="summary", usage={"output_tokens": 1_200}))
    bot.slash("/fork", "--fresh pricing")
    root = bot.fork_root()
    bot.settled()
    bot.react("UCAROL01", root)
    wait_until(lambda: summaries(slack))
    bot.slash("/context")
    [answer] = wait_until(lambda: [r for r in slack.responses if "conversation" in r.get("text", "")])
    text = answer["text"]
    assert answer["response_type"] == "ephemeral"
    assert "#1" in text and "pricing" in text and "160,000" in text
    assert "80,500 tokens burned → 1,200-token summary" in text
    assert "kept *79,300 tokens*" in text


@pytest.mark.settings(threadfork_merge_policy="owner")
def test_under_the_owner_policy_others_are_refused_privately(bot, slack, claude):
    root = talk_in_fork(bot, slack)  # opened by UALICE01
    bot.react("UCAROL01", root)
    wait_until(lambda: slack.calls_to("chat.postEphemeral"))
    bot.settled()
    found = slack.calls_to("chat.postEphemeral")
    assert len(found) == 1, [c.args for c in found]
    [refusal] = found
    assert refusal["user"] == "UCAROL01" and "<@UALICE01>" in refusal["text"]
    assert bot.store.sessions.fork_by_number(GENERAL, 1).status.value == "open"
    bot.react("UALICE01", root)
    wait_until(lambda: summaries(slack))


def test_a_failed_answer_is_retried_with_the_repeat_reaction(bot, slack, claude):
    claude.script(*[Script(status=529, error_type="overloaded_error")] * 3)
    ts = bot.say("UALICE01", "please answer", mention=True)
    [notice] = wait_until(lambda: slack.posts(CHANNEL))
    assert "🔁" in notice["text"]
    bot.settled()
    bot.react("UALICE01", ts, "repeat")
    wait_until(lambda: len(slack.posts(CHANNEL)) == 2)
    bot.settled()
    assert slack.posts(CHANNEL)[1].shown == "Answer 4"
    bot.react("UALICE01", ts, "repeat")  # already answered: nothing happens
    bot.settled()
    assert len(claude.requests) == 4
