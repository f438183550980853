"""Shortcuts, `/forks`, the Home tab, edits and deletions, help — as Slack sends them."""
import json
import urllib.parse

from bot.domain.model import ForkStatus

from ..fakes.anthropic_api import Script, request_texts
from ..fakes.slack_api import TEAM_ID
from ..harness import APP_ID, CHANNEL, GENERAL, wait_until


def shortcut(bot, callback_id, message_ts, *, thread_ts=None, user="UCAROL01"):
    message = {"type": "message", "user": "UALICE01", "ts": message_ts, "text": "x"}
    if thread_ts:
        message["thread_ts"] = thread_ts
    payload = {"type": "message_action", "callback_id": callback_id, "trigger_id": "1.trigger",
               "action_ts": "1.1", "team": {"id": TEAM_ID, "domain": "fake"},
               "user": {"id": user, "username": user.lower(), "team_id": TEAM_ID}, "api_app_id": APP_ID,
               "channel": {"id": CHANNEL, "name": "general"}, "message_ts": message_ts, "message": message,
               "response_url": bot.slack.response_url("shortcut"), "token": "legacy-verification-unused"}
    body = urllib.parse.urlencode({"payload": json.dumps(payload)}).encode()
    return bot.post(body, "application/x-www-form-urlencoded")


def parent_talk(bot, slack, *texts):
    stamps = []
    for text in texts:
        before = len(slack.posts(CHANNEL, top_level=True))
        stamps.append(bot.say("UALICE01", text, mention=True))
        wait_until(lambda: len(slack.posts(CHANNEL, top_level=True)) == before + 1)
        bot.settled()
    return stamps


def test_fork_from_here_opens_an_inherit_fork_whose_fork_point_is_that_message(bot, slack, claude):
    first, second, third = parent_talk(bot, slack, "alpha", "beta", "gamma")
    assert shortcut(bot, "fork_from_here", second).status == 200
    root = bot.fork_root()
    fork = bot.store.sessions.fork_by_message(GENERAL, root)
    assert fork.mode.value == "inherit" and fork.origin_ts == second
    bot.say("UBOB0001", "in the fork", thread_ts=root)
    wait_until(lambda: len(claude.requests) == 4)
    texts = request_texts(claude.requests[-1])
    assert any(t.endswith("\nalpha") for t in texts) and any(t.endswith("\nbeta") for t in texts)
    assert not any("gamma" in t for t in texts) and "Answer 2" not in texts
    assert "inherited 3 turns" in str(slack.posts(CHANNEL, top_level=True)[-1]["blocks"])


def test_fork_from_here_inside_a_thread_is_refused(bot, slack, claude):
    shortcut(bot, "fork_from_here", "1700000009.000001", thread_ts="1700000001.000001")
    [answer] = wait_until(lambda: slack.responses)
    assert "not in other threads" in answer["text"] and bot.store.sessions.forks_in(GENERAL, ForkStatus.OPEN) == []


def test_merge_this_fork_on_a_thread_message_merges_it(bot, slack, claude):
    bot.slash("/fork", "topic")
    root = bot.fork_root()
    wait_until(lambda: slack.posts(CHANNEL, top_level=False))
    bot.settled()
    reply = slack.posts(CHANNEL, top_level=False)[0]
    shortcut(bot, "merge_this_fork", reply.ts, thread_ts=root)
    wait_until(lambda: [p for p in slack.posts(CHANNEL, top_level=True) if "merged fork" in p.get("text", "")])


def test_merge_this_fork_outside_a_fork_says_so(bot, slack, claude):
    shortcut(bot, "merge_this_fork", "1700000009.000001")
    [answer] = wait_until(lambda: slack.responses)
    assert "fork's thread" in answer["text"] and claude.requests == []


def test_slash_forks_lists_open_forks_with_details_and_counts(bot, slack, claude):
    long_topic = "a very long topic " * 10
    bot.slash("/fork", long_topic.strip(), user="UALICE01")
    bot.fork_root(1)
    bot.slash("/fork", "--fresh second", user="UBOB0001")
    bot.fork_root(2)
    bot.slash("/fork", "--fresh third")
    root_three = bot.fork_root(3)
    bot.settled()
    bot.react("UALICE01", root_three, "x")
    wait_until(lambda: bot.store.sessions.fork_by_number(GENERAL, 3).status.value == "abandoned")
    bot.slash("/forks")
    [answer] = wait_until(lambda: [r for r in slack.responses if "Open forks" in r.get("text", "")])
    text = answer["text"]
    assert answer["response_type"] == "ephemeral"
    assert long_topic.strip() in text and "#1" in text and "#2" in text and "#3" not in text
    assert "<@UALICE01>" in text and "<@UBOB0001>" in text and "inherit" in text and "fresh" in text
    assert "2 turns" in text and "tokens burned" in text and "<!date^" in text and "archives" in text
    assert "Merged: 0 · Abandoned: 1" in text


def test_the_home_tab_shows_my_open_forks_and_the_token_economy(bot, slack, claude):
    claude.script(Script(text="fork answer", usage={"input_tokens": 900, "output_tokens": 100}),
                  Script(text="summary", usage={"input_tokens": 1000, "output_tokens": 50}))
    bot.slash("/fork", "--fresh merged one", user="UALICE01")
    root = bot.fork_root(1)
    wait_until(lambda: slack.posts(CHANNEL, top_level=False))
    bot.settled()
    bot.react("UALICE01", root)
    wait_until(lambda: bot.store.sessions.fork(bot.store.sessions.fork_by_number(GENERAL, 1).id).status.value == "merged")
    bot.slash("/fork", "--fresh still open", user="UALICE01", channel="C0OTHER001")
    bot.fork_root(1, channel="C0OTHER001")
    bot.settled()
    bot.event({"type": "app_home_opened", "user": "UALICE01", "channel": "D0HOME001", "tab": "home",
               "event_ts": "1.2"})
    [publish] = wait_until(lambda: slack.calls_to("views.publish"))
    assert publish["user_id"] == "UALICE01" and publish["view"]["type"] == "home"
    shown = json.dumps(publish["view"])
    assert "still open" in shown and "merged one" not in shown and "C0OTHER001" in shown
    assert "1,000" in shown and "50" in shown  # 900+100 burned in the fork, 50 returned by the summary


def test_the_home_tab_never_shows_a_channel_the_person_took_no_part_in(bot, slack, claude):
    bot.say("UALICE01", "a private thought", channel="D0ALICE01", channel_type="im")
    bot.slash("/fork", "--fresh secret plans", user="UALICE01", channel="G0PRIVATE1")
    bot.fork_root(1, channel="G0PRIVATE1")
    bot.settled()
    bot.say("UBOB0001", "hello", mention=True)
    bot.settled()
    bot.event({"type": "app_home_opened", "user": "UBOB0001", "channel": "D0HOME002", "tab": "home",
               "event_ts": "1.3"})
    [publish] = wait_until(lambda: slack.calls_to("views.publish"))
    shown = json.dumps(publish["view"])
    assert publish["user_id"] == "UBOB0001"
    assert "D0ALICE01" not in shown and "G0PRIVATE1" not in shown and "secret plans" not in shown


def test_an_edited_message_changes_its_stored_turn(bot, slack, claude):
    [ts] = parent_talk(bot, slack, "budget is 10k")
    edit = {"type": "message", "subtype": "message_changed", "channel": CHANNEL, "hidden": True,
            "ts": bot.new_ts(), "event_ts": bot.new_ts(), "channel_type": "channel",
            "message": {"type": "message", "user": "UALICE01", "text": "<@UBOT0001> budget is 12k", "ts": ts,
                        "edited": {"user": "UALICE01", "ts": bot.new_ts()}},
            "previous_message": {"type": "message", "user": "UALICE01", "text": "budget is 10k", "ts": ts}}
    assert bot.event(edit).status == 200
    bot.settled()
    assert len(claude.requests) == 1  # the edit itself calls no model
    parent_talk(bot, slack, "and now?")
    texts = request_texts(claude.requests[-1])
    assert any(t.endswith("\nbudget is 12k") for t in texts) and not any("10k" in t for t in texts)


def test_a_deleted_message_leaves_the_future_context(bot, slack, claude):
    ts, _ = parent_talk(bot, slack, "secret: do not keep this", "next")
    deletion = {"type": "message", "subtype": "message_deleted", "channel": CHANNEL, "hidden": True,
                "ts": bot.new_ts(), "deleted_ts": ts, "event_ts": bot.new_ts(), "channel_type": "channel",
                "previous_message": {"type": "message", "user": "UALICE01", "text": "secret", "ts": ts}}
    assert bot.event(deletion).status == 200
    bot.settled()
    assert len(claude.requests) == 2
    parent_talk(bot, slack, "after the deletion")
    assert not any("secret" in t for t in request_texts(claude.requests[-1]))


def test_someone_elses_edit_event_cannot_rewrite_my_turn(bot, slack, claude):
    [ts] = parent_talk(bot, slack, "original words")
    forged = {"type": "message", "subtype": "message_changed", "channel": CHANNEL, "ts": bot.new_ts(),
              "message": {"type": "message", "user": "UMALLORY", "text": "rewritten", "ts": ts}}
    bot.event(forged)
    parent_talk(bot, slack, "check")
    assert any(t.endswith("\noriginal words") for t in request_texts(claude.requests[-1]))
