"""Merging (invariants 5 and 7): every gesture, exactly once, and the parent gets only the summary."""
import threading

from bot.domain.model import ForkStatus

from ..fakes.anthropic_api import Script, is_merge_request, last_user_text, request_texts
from ..harness import CHANNEL, GENERAL, at_once, wait_until


def open_fork_with_talk(bot, slack, topic="pricing", user="UALICE01"):
    known = len(bot.store.sessions.forks_in(GENERAL, ForkStatus.OPEN))
    bot.slash("/fork", topic, user=user)
    # the command is answered before the fork is stored: wait for this one, not the one before it
    open_forks = wait_until(lambda: (forks := bot.store.sessions.forks_in(GENERAL, ForkStatus.OPEN))[known:] and forks,
                            message="the fork opened")
    root = bot.fork_root(open_forks[-1].number)
    wait_until(lambda: any(p.get("thread_ts") == root for p in slack.posts(CHANNEL)))
    before = len(slack.posts(CHANNEL, top_level=False))
    bot.say("UBOB0001", "constraint: must stay under $20/month", thread_ts=root)
    wait_until(lambda: len(slack.posts(CHANNEL, top_level=False)) == before + 1)
    bot.settled()
    return root


def summaries(slack):
    return [p for p in slack.posts(CHANNEL, top_level=True) if "merged fork" in p.get("text", "")]


def merge_requests(claude):
    return [r for r in claude.requests if is_merge_request(r)]


def test_a_check_reaction_on_the_root_merges_the_fork(bot, slack, claude):
    slack.names["UCAROL01"] = "carol"
    root = open_fork_with_talk(bot, slack)
    claude.script(Script(text="Decision: tiered pricing.", usage={"output_tokens": 42}))
    bot.react("UCAROL01", root)
    [post] = wait_until(lambda: summaries(slack), message="the summary post")
    bot.settled()
    assert "thread_ts" not in post.args and "reply_broadcast" not in post.args
    header = post["blocks"][0]["text"]["text"]
    assert "<@UCAROL01> merged fork #1" in header and "pricing" in header
    assert "4 turns" in header and "tokens burned" in header and "42-token summary" in header
    assert post["blocks"][1] == {"type": "markdown", "text": "Decision: tiered pricing."}
    note = [p for p in slack.posts(CHANNEL, top_level=False) if "merged this fork" in p.get("text", "")]
    assert len(note) == 1 and note[0]["thread_ts"] == root and "archives" in note[0]["text"]
    [update] = [c for c in slack.calls_to("chat.update") if c["ts"] == root]
    assert "Merged" in str(update["blocks"]) and "UCAROL01" in str(update["blocks"])
    assert "Merge" not in [e["text"]["text"] for b in update["blocks"] if b["type"] == "actions"
                           for e in b["elements"]]


def test_the_summary_request_is_one_more_turn_on_the_forks_own_history(bot, slack, claude):
    root = open_fork_with_talk(bot, slack)
    bot.react("UCAROL01", root)
    wait_until(lambda: summaries(slack))
    [merge] = merge_requests(claude)
    fork_reply = claude.requests[-2]
    assert merge["messages"][:-1][:len(fork_reply["messages"]) - 1] == [
        {**m, "content": [{k: v for k, v in b.items() if k != "cache_control"} for b in m["content"]]}
        for m in fork_reply["messages"][:-1]]
    assert any("constraint: must stay under $20/month" in t for t in request_texts(merge))
    prompt = last_user_text(merge)
    for section in ("Outcome", "Rationale", "Rejected options", "verbatim", "Open questions", "Artifacts",
                    "Next actions"):
        assert section in prompt


def test_after_a_merge_the_parent_sees_the_summary_and_none_of_the_forks_turns(bot, slack, claude):
    root = open_fork_with_talk(bot, slack)
    claude.script(Script(text="SUMMARY-TEXT: go with tiers"))
    bot.react("UCAROL01", root)
    wait_until(lambda: summaries(slack))
    bot.say("UALICE01", "what did we decide?", mention=True)
    wait_until(lambda: len(claude.requests) == 4)
    texts = request_texts(claude.requests[-1])
    assert texts[1].startswith("[Merged fork #1") and texts[1].endswith("\nSUMMARY-TEXT: go with tiers")
    assert texts[2:] == ["[person-ce01 <@UALICE01>]\nwhat did we decide?"]
    assert not any("must stay under" in t for t in texts)


def test_a_heavy_check_on_any_message_of_the_thread_merges(bot, slack, claude):
    root = open_fork_with_talk(bot, slack)
    reply_ts = bot.say("UBOB0001", "one more thing", thread_ts=root)
    wait_until(lambda: len(slack.posts(CHANNEL, top_level=False)) == 3)
    bot.react("UBOB0001", reply_ts, "heavy_check_mark")
    wait_until(lambda: summaries(slack))


def test_a_check_on_claudes_reply_in_the_thread_merges(bot, slack, claude):
    root = open_fork_with_talk(bot, slack)
    fork = bot.store.sessions.fork_by_message(GENERAL, root)
    reply_ts = [t.slack_ts for t in bot.store.turns.turns(fork.id) if t.role.value == "assistant"][-1]
    assert reply_ts  # the ts Slack gave Claude's reply, remembered for reactions
    bot.react("UBOB0001", reply_ts)
    wait_until(lambda: summaries(slack))


def test_slash_merge_with_a_number_passes_guidance_to_the_summary(bot, slack, claude):
    open_fork_with_talk(bot, slack)
    bot.slash("/merge", "1 keep only the final numbers", user="UCAROL01")
    wait_until(lambda: summaries(slack))
    assert "Their guidance for the summary: keep only the final numbers" in last_user_text(merge_requests(claude)[0])


def test_slash_merge_without_a_number_takes_the_callers_most_recently_active_fork(bot, slack, claude):
    open_fork_with_talk(bot, slack, "first", user="UALICE01")
    open_fork_with_talk(bot, slack, "second", user="UALICE01")
    root_one = bot.store.sessions.fork_by_number(GENERAL, 1).root_ts
    bot.say("UALICE01", "touching fork one again", thread_ts=root_one)
    wait_until(lambda: len(slack.posts(CHANNEL, top_level=False)) == 5)
    bot.slash("/merge", "", user="UALICE01")
    [post] = wait_until(lambda: summaries(slack))
    assert "fork #1" in post["text"]
    assert bot.store.sessions.fork_by_number(GENERAL, 2).status.value == "open"


def test_mention_merge_in_the_thread_merges_with_guidance(bot, slack, claude):
    root = open_fork_with_talk(bot, slack)
    bot.say("UBOB0001", "merge focus on risks", thread_ts=root, mention=True)
    wait_until(lambda: summaries(slack))
    bot.settled()
    assert len(merge_requests(claude)) == 1
    assert "focus on risks" in last_user_text(merge_requests(claude)[0])


def test_one_event_delivered_three_times_merges_once(bot, slack, claude):
    root = open_fork_with_talk(bot, slack)
    for retry in range(3):
        headers = {"X-Slack-Retry-Num": str(retry), "X-Slack-Retry-Reason": "http_timeout"} if retry else {}
        reaction = {"type": "reaction_added", "user": "UCAROL01", "reaction": "white_check_mark",
                    "item": {"type": "message", "channel": CHANNEL, "ts": root}, "event_ts": "1.1"}
        assert bot.event(reaction, event_id="EvSAME0001", headers=headers).status == 200
    wait_until(lambda: summaries(slack))
    bot.settled()
    assert_merged_once(bot, slack, claude)


def test_two_checks_and_a_slash_merge_at_once_merge_once(bot, slack, claude):
    root = open_fork_with_talk(bot, slack)
    claude.script(Script(text="slow summary", chunk_delay=0.1))
    gestures = [lambda: bot.react("UCAROL01", root), lambda: bot.react("UBOB0001", root),
                lambda: bot.slash("/merge", "1", user="UALICE01")]
    at_once(*gestures)
    wait_until(lambda: summaries(slack))
    bot.settled()
    assert_merged_once(bot, slack, claude)


def assert_merged_once(bot, slack, claude):
    assert len(merge_requests(claude)) == 1
    assert len(summaries(slack)) == 1
    fork = bot.store.sessions.fork_by_number(GENERAL, 1)
    assert fork.status.value == "merged"
    assert [t.role.value for t in bot.store.turns.turns(fork.parent_id)].count("summary") == 1


def test_merging_an_already_merged_fork_is_refused_privately_with_the_open_forks(bot, slack, claude):
    root = open_fork_with_talk(bot, slack, "done topic")
    bot.slash("/fork", "--fresh still open topic")
    bot.fork_root(2)
    bot.react("UCAROL01", root)
    wait_until(lambda: summaries(slack))
    bot.slash("/merge", "1", user="UCAROL01")
    answer = wait_until(lambda: [r for r in slack.responses if "already merged" in r.get("text", "")])[0]
    assert answer["response_type"] == "ephemeral" and "#2" in answer["text"] and "still open topic" in answer["text"]
    bot.settled()
    assert len(summaries(slack)) == 1


def test_merge_with_no_open_fork_or_an_unknown_number_says_which(bot, slack, claude):
    bot.slash("/merge", "")
    bot.slash("/merge", "7")
    wait_until(lambda: len(slack.responses) == 2)
    none, unknown = sorted((r["text"] for r in slack.responses), key=lambda t: "#7" in t)
    assert none == "There is no open fork in this channel to merge. `/fork [topic]` opens one."
    assert "no fork #7" in unknown and "There are no open forks in this channel." in unknown
    bot.settled()
    assert claude.requests == [] and slack.posts() == []


def test_a_second_check_after_the_merge_gets_a_private_notice(bot, slack, claude):
    root = open_fork_with_talk(bot, slack)
    bot.react("UCAROL01", root)
    wait_until(lambda: summaries(slack))
    bot.settled()
    bot.react("UBOB0001", root)
    [notice] = wait_until(lambda: slack.calls_to("chat.postEphemeral"))
    assert notice["user"] == "UBOB0001" and "already merged" in notice["text"]


def test_a_message_in_a_merged_thread_gets_a_notice_and_no_model_call(bot, slack, claude):
    root = open_fork_with_talk(bot, slack)
    bot.react("UCAROL01", root)
    wait_until(lambda: summaries(slack))
    bot.settled()
    calls = len(claude.requests)
    bot.say("UBOB0001", "one more idea", thread_ts=root)
    [notice] = wait_until(lambda: slack.calls_to("chat.postEphemeral"))
    bot.settled()
    assert "merged" in notice["text"] and notice["thread_ts"] == root
    assert len(claude.requests) == calls


def test_a_fork_with_no_turns_is_not_merged(bot, slack, claude):
    bot.slash("/fork")
    root = bot.fork_root()
    bot.react("UCAROL01", root)
    [notice] = wait_until(lambda: slack.calls_to("chat.postEphemeral"))
    bot.settled()
    assert "nothing to merge" in notice["text"] and claude.requests == []
    assert bot.store.sessions.fork_by_number(GENERAL, 1).status.value == "open"


def test_a_failed_summary_leaves_the_fork_open_and_says_so(bot, slack, claude):
    root = open_fork_with_talk(bot, slack)
    claude.script(*[Script(status=500)] * 3)
    bot.slash("/merge", "1")
    answer = wait_until(lambda: [r for r in slack.responses if "server error" in r.get("text", "")])[0]
    assert answer["response_type"] == "ephemeral"
    fork = bot.store.sessions.fork_by_number(GENERAL, 1)
    assert fork.status.value == "open"
    assert [t.role.value for t in bot.store.turns.turns(fork.parent_id)].count("summary") == 0
    bot.react("UCAROL01", root)
    wait_until(lambda: summaries(slack))


def test_abandon_by_reaction_closes_the_fork_and_adds_nothing_to_the_parent(bot, slack, claude):
    root = open_fork_with_talk(bot, slack)
    bot.react("UCAROL01", root, "x")
    wait_until(lambda: [c for c in slack.calls_to("chat.update") if "Abandoned" in str(c.get("blocks"))])
    fork = bot.store.sessions.fork_by_number(GENERAL, 1)
    assert fork.status.value == "abandoned"
    assert bot.store.turns.turns(fork.parent_id) == []
    bot.say("UBOB0001", "hello?", thread_ts=root)
    wait_until(lambda: slack.calls_to("chat.postEphemeral"))
    bot.settled()
    assert not merge_requests(claude) and len(claude.requests) == 2


def test_the_merge_and_abandon_buttons_act_in_one_click(bot, slack, claude):
    open_fork_with_talk(bot, slack, "one")
    bot.slash("/fork", "--fresh two")
    bot.fork_root(2)
    one, two = bot.store.sessions.fork_by_number(GENERAL, 1), bot.store.sessions.fork_by_number(GENERAL, 2)
    assert bot.click("fork_merge", str(one.id), user="UCAROL01").status == 200
    assert bot.click("fork_abandon", str(two.id), user="UCAROL01").status == 200
    wait_until(lambda: summaries(slack))
    wait_until(lambda: bot.store.sessions.fork(two.id).status.value == "abandoned")
    assert bot.click("fork_merge", "not-a-number").status == 200
    bot.settled()
    assert len(summaries(slack)) == 1


def test_abandon_clicked_on_a_root_the_bot_has_not_heard_back_about_waits_for_the_fork_to_open(bot, slack, claude):
    """Slack shows the root before the bot has its ts: a click in between acts once the opening is recorded,
    on the root and in its thread, never with a note posted in the channel."""
    released = slack.hold("chat.postMessage")
    bot.slash("/fork", "--fresh quick")
    [root] = wait_until(lambda: [p for p in slack.posts(CHANNEL, top_level=True) if "Fork #1" in str(p["blocks"])],
                        message="the root shown")
    fork = bot.store.sessions.fork_by_number(GENERAL, 1)
    assert fork.root_ts is None  # the bot has not heard back yet
    threading.Timer(0.3, released.set).start()
    assert bot.click("fork_abandon", str(fork.id), message_ts=root.ts, user="UCAROL01").status == 200
    wait_until(lambda: bot.store.sessions.fork(fork.id).status.value == "abandoned", message="the abandon")
    bot.settled()
    assert [c for c in slack.calls_to("chat.update") if c["ts"] == root.ts and "Abandoned" in str(c["blocks"])]
    assert [p for p in slack.posts(CHANNEL, top_level=False)
            if p["thread_ts"] == root.ts and "<@UCAROL01> abandoned this fork" in p.get("text", "")]
    assert [p.ts for p in slack.posts(CHANNEL, top_level=True)] == [root.ts]  # no note in the channel
    assert not slack.calls_to("chat.postEphemeral")


def test_a_click_on_a_fork_whose_opening_is_never_recorded_is_answered_still_opening_and_changes_nothing(
        bot, slack, claude):
    released = slack.hold("chat.postMessage")
    bot.slash("/fork", "--fresh stuck")
    [root] = wait_until(lambda: slack.posts(CHANNEL, top_level=True), message="the root shown")
    fork = bot.store.sessions.fork_by_number(GENERAL, 1)
    assert bot.click("fork_abandon", str(fork.id), message_ts=root.ts, user="UCAROL01").status == 200
    [told] = wait_until(lambda: slack.calls_to("chat.postEphemeral"), timeout=8, message="the answer")
    assert told["text"] == "Fork #1 is still opening; try again in a moment." and told["user"] == "UCAROL01"
    released.set()
    bot.settled()
    assert bot.store.sessions.fork(fork.id).status.value == "open"
    assert not [c for c in slack.calls_to("chat.update") if c["ts"] == root.ts]
