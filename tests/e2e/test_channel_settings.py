"""Channel settings (`/threadfork`), end to end through the fakes: the modal opened with views.open
from the command's trigger, submitted as a view_submission, refusals inside the modal, the notice in
the channel, instructions after Threadfork's own system prompt (a fork keeps its snapshot), and who
may change them."""
import json

import pytest
from sqlalchemy import text

from bot.domain.context import SYSTEM_PROMPT
from bot.domain.model import Channel, ForkStatus
from bot.domain.settings import ChannelSettings

from ..fakes import slack_payloads as payloads
from ..fakes.anthropic_api import request_texts
from ..fakes.samples import png
from ..harness import CHANNEL, GENERAL, RunningBot, wait_until

BLOCKS = ["instructions", "model", "effort", "fork_token_budget", "monthly_spend_cap_usd", "merge_policy", "merge_review",
          "idle_reminder", "expiry", "tools", "memory_budget", "memory_writers", "memory_tool", "enabled"]
pytestmark = pytest.mark.settings(threadfork_model="claude-sonnet-5-5", threadfork_models="claude-haiku-5-5")


def admin(slack, user="UADMIN01"):
    slack.person(user, is_admin=True)
    return user


def open_settings(bot, slack, user):
    before = len(slack.opened_views("threadfork_settings"))
    bot.slash("/threadfork", "", user=user)
    return wait_until(lambda: slack.opened_views("threadfork_settings")[before:], message="the settings modal")[0]


def element(modal, block_id):
    return next(b for b in modal.view["blocks"] if b.get("block_id") == block_id)["element"]


def notices(slack):
    return [p for p in slack.posts(CHANNEL, top_level=True) if "changed Threadfork's settings" in p.get("text", "")]


def ask_parent(bot, claude, text="what now?", user="UALICE01"):
    before = len(claude.requests)
    bot.say(user, text, mention=True)
    wait_until(lambda: len(claude.requests) > before, message="the parent's request")
    bot.settled()
    return claude.requests[-1]


def system_text(request) -> str:
    return "".join(block["text"] for block in request["system"])


def test_the_modal_shows_every_setting_in_effect_with_the_environments_defaults(bot, slack):
    modal = open_settings(bot, slack, admin(slack))
    assert modal.view["callback_id"] == "threadfork_settings" and modal.user == "UADMIN01"
    assert [b["block_id"] for b in modal.view["blocks"] if b["type"] == "input"] == BLOCKS + [
        "connector_0_name", "connector_0_url", "connector_0_token", "connector_0_tools"]  # a slot to add one
    assert element(modal, "model")["initial_option"]["value"] == "claude-sonnet-5-5"
    assert [o["value"] for o in element(modal, "model")["options"]] == ["claude-sonnet-5-5", "claude-haiku-5-5"]
    assert element(modal, "enabled")["initial_option"]["value"] == "on"
    assert [o["value"] for o in element(modal, "enabled")["options"]] == ["on", "off"]
    assert element(modal, "idle_reminder")["initial_value"] == "1d" and element(modal, "expiry")["initial_value"] == "7d"
    assert element(modal, "merge_policy")["initial_option"]["value"] == "anyone"
    assert "initial_value" not in element(modal, "fork_token_budget")  # no budget by default
    assert slack.calls_to("views.open")[-1]["trigger_id"]


def test_nonsense_is_refused_inside_the_modal_and_nothing_is_saved(bot, slack):
    modal = open_settings(bot, slack, admin(slack))
    reply = bot.submit_view(modal, {"fork_token_budget": "lots", "expiry": "soon"})
    assert reply.status == 200
    answer = reply.json()
    assert answer["response_action"] == "errors"
    assert set(answer["errors"]) == {"fork_token_budget", "expiry"} and "positive number" in answer["errors"][
        "fork_token_budget"]
    assert bot.store.channel_settings.of(GENERAL) == ChannelSettings() and not notices(slack)
    again = bot.submit_view(modal, {"fork_token_budget": "-5", "expiry": "7d"})
    assert again.json()["errors"].keys() == {"fork_token_budget"}


def test_an_unknown_model_in_a_forged_submission_is_refused(bot, slack):
    modal = open_settings(bot, slack, admin(slack))
    state = json.loads(json.dumps(modal.view["state"]))
    state["values"]["model"] = {"value": {"type": "static_select", "selected_option": {
        "text": {"type": "plain_text", "text": "gpt"}, "value": "gpt-9"}}}
    team = slack.team(None)
    payload = payloads.view_submission({**modal.view, "state": state}, user="UADMIN01", team=team,
                                       trigger_id=slack.issue_trigger("UADMIN01", team, modal.id))
    reply = bot._interact(payload)
    assert reply.json()["response_action"] == "errors" and "model" in reply.json()["errors"]
    assert bot.store.channel_settings.of(GENERAL) == ChannelSettings()


def test_a_save_posts_who_changed_what_and_the_next_turn_uses_it(bot, slack, claude):
    user = admin(slack)
    modal = open_settings(bot, slack, user)
    reply = bot.submit_view(modal, {"instructions": "Answer in French.", "model": "claude-haiku-5-5",
                                    "fork_token_budget": "50k", "tools": ["web_search"]})
    assert reply.status == 200 and not reply.body
    [notice] = wait_until(lambda: notices(slack), message="the settings notice")
    assert "<@UADMIN01>" in notice["text"] and "model → claude-haiku-5-5" in notice["text"]
    assert "fork token budget → 50,000 tokens" in notice["text"] and "instructions updated" in notice["text"]
    request = ask_parent(bot, claude)
    assert request["model"] == "claude-haiku-5-5"
    assert system_text(request) == SYSTEM_PROMPT + "\n\nInstructions from this channel's admins (follow them unless " \
                                                   "they conflict with the above):\nAnswer in French."
    assert [t["name"] for t in request["tools"]] == ["web_search"]
    again = open_settings(bot, slack, user)
    assert element(again, "instructions")["initial_value"] == "Answer in French."
    assert element(again, "fork_token_budget")["initial_value"] == "50000"


def test_a_fork_keeps_the_settings_of_its_fork_point_and_the_parent_takes_the_new_ones(bot, slack, claude):
    user = admin(slack)
    bot.submit_view(open_settings(bot, slack, user), {"instructions": "Old rules."})
    ask_parent(bot, claude, "hello")
    bot.slash("/fork", "pricing")
    root = bot.fork_root(1)
    bot.say("UBOB0001", "first fork turn", thread_ts=root)
    wait_until(lambda: any("first fork turn" in t for t in request_texts(claude.requests[-1])))
    bot.settled()
    bot.submit_view(open_settings(bot, slack, user), {"instructions": "New rules.", "model": "claude-haiku-5-5"})
    wait_until(lambda: len(notices(slack)) == 2)
    before = len(claude.requests)
    bot.say("UBOB0001", "second fork turn", thread_ts=root)
    wait_until(lambda: len(claude.requests) > before)
    bot.settled()
    assert system_text(claude.requests[-1]).endswith("\nOld rules.")
    assert claude.requests[-1]["model"] == "claude-sonnet-5-5"  # the fork's model too is a snapshot
    parent = ask_parent(bot, claude, "and the channel?")
    assert system_text(parent).endswith("\nNew rules.") and parent["model"] == "claude-haiku-5-5"


def test_only_workspace_admins_and_threadfork_admins_may_open_the_settings(bot, slack):
    slack.person("UBOB0001", is_admin=False)
    bot.slash("/threadfork", "", user="UBOB0001")
    wait_until(lambda: any("Only workspace admins" in r.get("text", "") for r in slack.responses))
    assert not slack.calls_to("views.open")
    slack.person("UOWNER01", is_owner=True)
    assert open_settings(bot, slack, "UOWNER01").user == "UOWNER01"


@pytest.mark.settings(threadfork_admins="UCAROL01")
def test_a_user_named_in_threadfork_admins_may_change_settings(bot, slack):
    modal = open_settings(bot, slack, "UCAROL01")
    bot.submit_view(modal, {"merge_policy": "owner"})
    wait_until(lambda: notices(slack))
    assert bot.store.channel_settings.of(GENERAL).merge_policy == "owner"


def test_a_forged_submission_by_someone_who_is_not_an_admin_saves_nothing(bot, slack):
    modal = open_settings(bot, slack, admin(slack))
    slack.person("UMALLORY", is_admin=False)
    reply = bot.submit_view(modal, {"enabled": "off"}, user="UMALLORY")
    assert reply.json()["response_action"] == "errors" and "Only workspace admins" in reply.json()["errors"][
        "instructions"]
    assert bot.store.channel_settings.of(GENERAL) == ChannelSettings()


def test_a_channel_turned_off_answers_once_privately_and_calls_no_model(bot, slack, claude):
    bot.submit_view(open_settings(bot, slack, admin(slack)), {"enabled": "off"})
    wait_until(lambda: notices(slack))
    bot.say("UALICE01", "are you there?", mention=True)  # delivered as message and app_mention
    bot.slash("/fork", "a topic")
    wait_until(lambda: len(slack.calls_to("chat.postEphemeral")) + len(slack.responses) >= 2)
    bot.settled()
    refusals = [c["text"] for c in slack.calls_to("chat.postEphemeral")] + [r["text"] for r in slack.responses]
    assert len(refusals) == 2 and all("turned off in this channel" in t for t in refusals)
    assert not claude.requests and not bot.store.sessions.forks_in(GENERAL, ForkStatus.OPEN)
    assert open_settings(bot, slack, "UADMIN01")  # /threadfork itself still works there


def the_one_refusal(bot, slack, user: str) -> dict:
    """A mention by `user` (delivered as message and app_mention): the one private answer it got."""
    bot.say(user, "hello bot", mention=True)
    wait_until(lambda: slack.calls_to("chat.postEphemeral"))
    bot.settled()
    [refusal] = slack.calls_to("chat.postEphemeral")
    return refusal


@pytest.mark.settings(threadfork_allowed_users="UALICE01")
def test_someone_outside_the_allowed_users_gets_exactly_one_private_answer(bot, slack, claude):
    refusal = the_one_refusal(bot, slack, "UBOB0001")
    assert refusal["user"] == "UBOB0001" and "isn't enabled for you" in refusal["text"] and not claude.requests
    ask_parent(bot, claude, "hello from alice")
    assert len(claude.requests) == 1


@pytest.mark.settings(threadfork_allowed_channels="C0OTHER001")
def test_a_channel_outside_the_allowed_channels_gets_one_private_answer(bot, slack, claude):
    refusal = the_one_refusal(bot, slack, "UALICE01")
    assert "isn't enabled in this channel" in refusal["text"] and not claude.requests


def test_forget_asks_first_then_deletes_the_channels_conversations_and_keeps_its_settings(bot, slack, claude):
    user = admin(slack)
    bot.submit_view(open_settings(bot, slack, user), {"instructions": "Keep me."})
    ask_parent(bot, claude, "note the launch date: Friday")
    bot.slash("/fork", "pricing")
    bot.say("UBOB0001", "fork talk", thread_ts=bot.fork_root(1))
    wait_until(lambda: len(claude.requests) >= 3)
    bot.settled()
    slack.person("UBOB0001", is_admin=False)
    bot.slash("/threadfork", "forget", user="UBOB0001")
    wait_until(lambda: any("Only workspace admins" in r.get("text", "") for r in slack.responses))
    bot.slash("/threadfork", "forget", user=user)
    [question] = wait_until(lambda: [r for r in slack.responses if r.get("blocks") and "forget" in r["text"]])
    assert [e["action_id"] for e in question["blocks"][-1]["elements"]] == ["threadfork_forget",
                                                                           "threadfork_forget_cancel"]
    assert bot.store.sessions.forks_in(GENERAL, ForkStatus.OPEN)
    answer = question["blocks"][-1]["elements"][0]["value"]
    bot.click("threadfork_forget", answer, user=user)
    wait_until(lambda: any("made Threadfork forget" in p.get("text", "") for p in slack.posts(CHANNEL)))
    [settled] = wait_until(lambda: [r for r in slack.responses if r.get("replace_original")])
    assert settled["text"].startswith("🧹 Done") and not settled.get("blocks")  # the question's buttons are gone
    with bot.db.engine.connect() as conn:
        turns = conn.execute(text("SELECT count(*) FROM turns")).scalar()
        forks = conn.execute(text("SELECT count(*) FROM sessions WHERE kind = 'fork'")).scalar()
    assert (turns, forks) == (0, 0)
    assert bot.store.channel_settings.of(GENERAL).instructions == "Keep me."
    request = ask_parent(bot, claude, "what was the launch date?")
    before_again = len(claude.requests)
    assert request_texts(request)[1:] == ["[person-ce01 <@UALICE01>]\nwhat was the launch date?"]
    assert system_text(request).endswith("\nKeep me.")
    bot.click("threadfork_forget", answer, user=user)  # the same button again, from a client not yet updated
    wait_until(lambda: any("already answered" in r.get("text", "") for r in slack.responses))
    bot.settled()
    assert len([p for p in slack.posts(CHANNEL) if "made Threadfork forget" in p.get("text", "")]) == 1
    assert len(claude.requests) == before_again and stored_turns(bot) == 2  # nothing was deleted again


def stored_turns(bot) -> int:
    with bot.db.engine.connect() as conn:
        return conn.execute(text("SELECT count(*) FROM turns")).scalar()


def test_a_forget_question_expires_and_keep_it_deletes_nothing(bot, slack, claude):
    user = admin(slack)
    ask_parent(bot, claude, "note this")
    bot.slash("/threadfork", "forget", user=user)
    [question] = wait_until(lambda: [r for r in slack.responses if r.get("blocks")])
    answer = question["blocks"][-1]["elements"][0]["value"]
    bot.click("threadfork_forget_cancel", "keep", user=user)
    wait_until(lambda: any(r.get("text") == "Nothing was deleted." and r.get("replace_original")
                           for r in slack.responses))
    bot.clock.advance(minutes=16)
    bot.click("threadfork_forget", answer, user=user)
    wait_until(lambda: any("expired" in r.get("text", "") for r in slack.responses))
    bot.settled()
    assert stored_turns(bot) == 2


def test_a_channel_of_another_workspace_with_the_same_id_keeps_its_own_settings(bot, slack):
    bot.submit_view(open_settings(bot, slack, admin(slack)), {"enabled": "off"})
    wait_until(lambda: notices(slack))
    assert bot.store.channel_settings.of(Channel("T0TEAM002", CHANNEL)) == ChannelSettings()


def test_after_a_forget_the_sweep_deletes_the_shared_files_contents_here_and_in_claudes_file_store(
        bot, slack, claude):
    user = admin(slack)
    image = slack.share_file("plan.png", png(40, 30), "image/png", "png")
    notes = slack.share_file("notes.txt", b"secret launch code 1234\n", "text/plain", "text")
    bot.say("UALICE01", "read these", mention=True, files=[image, notes])
    wait_until(lambda: claude.requests)
    bot.settled()
    [upload] = claude.files.uploads
    bot.slash("/threadfork", "forget", user=user)
    [question] = wait_until(lambda: [r for r in slack.responses if r.get("blocks")])
    bot.click("threadfork_forget", question["blocks"][-1]["elements"][0]["value"], user=user)
    wait_until(lambda: any("made Threadfork forget" in p.get("text", "") for p in slack.posts(CHANNEL)))
    bot.clock.advance(minutes=11)
    bot.services.sweep()
    with bot.db.engine.connect() as conn:
        assert conn.execute(text("SELECT count(*) FROM files")).scalar() == 0
    assert claude.files.files[upload.file_id].deleted
    bot.say("UALICE01", "again", mention=True, files=[image])  # shared again: downloaded and uploaded anew
    wait_until(lambda: len(claude.files.uploads) == 2)
    bot.settled()
    assert len(slack.downloads_of(image["id"])) == 2


def test_when_slack_wont_say_who_is_asking_the_settings_stay_closed_and_the_person_is_told(bot, slack):
    admin(slack)
    slack.fail("users.info", "fatal_error", times=10)
    bot.slash("/threadfork", "", user="UADMIN01")
    wait_until(lambda: any("Slack refused the request (fatal_error)" in r.get("text", "") for r in slack.responses))
    bot.settled()
    assert not slack.calls_to("views.open")


def test_a_fork_keeps_the_environments_model_and_tools_of_its_fork_point_across_a_restart(slack, claude,
                                                                                        migrated_sqlite_url):
    first = RunningBot(slack, claude, migrated_sqlite_url, threadfork_model="claude-sonnet-5-5")
    try:
        first.slash("/fork", "pricing")
        root = first.fork_root(1)
        first.say("UBOB0001", "first fork turn", thread_ts=root)
        wait_until(lambda: claude.requests)
        first.settled()
    finally:
        first.stop()
    second = RunningBot(slack, claude, migrated_sqlite_url, threadfork_model="claude-haiku-5-5",
                        threadfork_tools="web_search")
    try:
        second.say("UBOB0001", "second fork turn", thread_ts=root)
        wait_until(lambda: len(claude.requests) == 2)
        second.settled()
        assert claude.requests[-1]["model"] == "claude-sonnet-5-5" and "tools" not in claude.requests[-1]
        parent = ask_parent(second, claude, "and the channel?")
        assert parent["model"] == "claude-haiku-5-5" and [t["name"] for t in parent["tools"]] == ["web_search"]
    finally:
        second.stop()
