"""Channel settings as values (bot/domain/settings.py) and their use cases on the in-memory store."""
from datetime import timezone

import pytest

from bot.domain.context import system_prompt
from bot.domain.settings import ChannelSettings, Choices, changes, parse_budget, read_form
from bot.services.access import AccessLists
from bot.services.commands import SlashCommand
from bot.app import ChannelOptions, wire_services
from bot.services.policy import Policy
from bot.services.ports import Audience, Chat
from bot.services.incoming import IncomingMessage

from .conftest import CHANNEL, UseCases

DEFAULTS = ChannelSettings(None, "claude-sonnet-5-5", 0, "anyone", True, 86400.0, 7 * 86400.0, (), False)
CHOICES = Choices(("claude-sonnet-5-5", "claude-haiku-5-5"), ("web_search", "web_fetch"))


@pytest.mark.parametrize("typed, tokens", [("200000", 200_000), ("200,000", 200_000), ("200k", 200_000),
                                           ("1.5m", 1_500_000), ("", 0), ("none", 0)])
def test_a_budget_is_read_as_people_type_it(typed, tokens):
    assert parse_budget(typed) == tokens


@pytest.mark.parametrize("typed", ["0", "-5", "lots", "12abc", "0k"])
def test_a_budget_that_is_not_a_positive_number_is_refused(typed):
    with pytest.raises(ValueError):
        parse_budget(typed)


def test_a_form_reads_every_input_and_keeps_what_it_lacks():
    asked, errors = read_form({"model": "claude-haiku-5-5", "tools": ["web_fetch"], "enabled": "off",
                               "idle_reminder": "2h", "instructions": "  Be terse.  "}, DEFAULTS, CHOICES)
    assert errors == {}
    assert asked == ChannelSettings("Be terse.", "claude-haiku-5-5", 0, "anyone", False, 7200.0, 7 * 86400.0,
                                    ("web_fetch",), False)


def test_each_mistake_is_keyed_by_its_input():
    _, errors = read_form({"model": "gpt-9", "fork_token_budget": "x", "merge_policy": "everyone",
                           "enabled": "maybe", "expiry": "later", "tools": ["telepathy"]}, DEFAULTS, CHOICES)
    assert set(errors) == {"model", "fork_token_budget", "merge_policy", "enabled", "expiry", "tools"}
    _, errors = read_form({"idle_reminder": "8d"}, DEFAULTS, CHOICES)
    assert "before the expiry" in errors["idle_reminder"]
    _, errors = read_form({"instructions": "x" * 3001}, DEFAULTS, CHOICES)
    assert "3,000" in errors["instructions"]


def test_only_what_differs_from_the_defaults_is_kept_and_laid_back_over_them():
    asked = ChannelSettings(None, "claude-sonnet-5-5", 5000, "anyone", True, 86400.0, 7 * 86400.0, (), True)
    kept = asked.beyond(DEFAULTS)
    assert kept == ChannelSettings(fork_token_budget=5000, merge_review=True)
    assert kept.over(DEFAULTS) == asked
    assert changes(DEFAULTS, asked) == ["fork token budget → 5,000 tokens", "summary review → on"]


def test_instructions_come_after_threadforks_own_text_and_none_leave_it_as_it_is():
    assert system_prompt("BASE", None) == "BASE" and system_prompt("BASE", "  ") == "BASE"
    assert system_prompt("BASE", "Be terse.").startswith("BASE\n\n") and system_prompt("BASE", "x").endswith("\nx")


def channel_cases(**lists):
    cases = UseCases()
    cases.services = wire_services(cases.store, Chat.all_in(cases.chat), cases.model, "UBOT0001", Policy(),
                              ChannelOptions(DEFAULTS, CHOICES, AccessLists(**{k: frozenset(v) for k, v in lists.items()})))
    return cases


def test_a_channels_budget_and_merge_policy_apply_to_its_forks_only():
    cases = channel_cases()
    cases.chat.admins.add("UADMIN01")
    channel = cases.store.sessions.session(cases.parent()).channel
    assert cases.services.channel_admin.save(channel, "UADMIN01", {"merge_policy": "owner"}) == {}
    fork = cases.open_fork("topic", user="UALICE01")
    cases.say("UBOB0001", "hello", thread_ts=fork.root_ts)
    cases.react("UBOB0001", fork.root_ts)
    assert "Only <@UALICE01>" in cases.chat.told("UBOB0001")[-1]
    other = cases.services.policies.of(fork.channel._replace(id="C0OTHER01"))
    assert other.merge_policy == "anyone"


def test_someone_outside_the_allow_list_is_answered_once_and_no_model_is_called():
    cases = channel_cases(users={"UALICE01"})
    ts = cases.say("UBOB0001", "hi", mention=True)
    cases.services.router.receive(IncomingMessage("T1", CHANNEL, "channel", "UBOB0001", "<@UBOT0001> hi",
                                                  ts))  # the same message again, as app_mention
    assert len(cases.chat.told("UBOB0001")) == 1 and not cases.model.inputs
    cases.slash("/fork", "topic", user="UALICE01")
    assert cases.all_forks()


def test_only_admins_may_save_and_a_save_is_announced_once():
    cases = channel_cases(admins={"UCAROL01"})
    channel = cases.store.sessions.session(cases.parent()).channel
    assert "Only workspace admins" in cases.services.channel_admin.save(channel, "UBOB0001", {"enabled": "off"})[
        "instructions"]
    assert cases.services.channel_admin.save(channel, "UCAROL01", {"enabled": "off"}) == {}
    assert cases.services.channel_admin.save(channel, "UCAROL01", {"enabled": "off"}) == {}  # nothing changed
    [notice] = cases.chat.of("post_notice")
    assert "<@UCAROL01>" in notice.text and "Threadfork here → off" in notice.text
    assert cases.services.access.refusal(channel, "UALICE01") is not None
    cases.services.channel_admin.forget(channel, "UBOB0001", Audience("T1", CHANNEL, "UBOB0001"), "0:x")
    assert "Only workspace admins" in cases.chat.told("UBOB0001")[-1]


@pytest.mark.parametrize("typed", ["99999999999999999999", "1e400k", "9999999999999999999999k", "1000000001"])
def test_a_budget_beyond_what_any_database_holds_is_refused_not_a_crash(typed):
    _, errors = read_form({"fork_token_budget": typed}, DEFAULTS, CHOICES)
    assert set(errors) == {"fork_token_budget"}


def test_durations_beyond_ten_years_are_refused_so_the_sweeps_clock_arithmetic_stays_safe():
    _, errors = read_form({"idle_reminder": "999999998d", "expiry": "99999999999d"}, DEFAULTS, CHOICES)
    assert set(errors) == {"idle_reminder", "expiry"} and "3650d" in errors["expiry"]


def test_a_model_since_dropped_from_the_list_can_be_kept_but_not_newly_chosen():
    current = ChannelSettings(None, "claude-old-1", 0, "anyone", True, 86400.0, 7 * 86400.0, (), False)
    assert read_form({"model": "claude-old-1"}, current, CHOICES)[1] == {}
    assert "model" in read_form({"model": "claude-old-1"}, DEFAULTS, CHOICES)[1]


def test_the_forget_button_works_once_and_only_while_its_question_is_fresh():
    cases = channel_cases(admins={"UADMIN01"})
    cases.say("UALICE01", "note this", mention=True)
    channel = cases.store.sessions.session(cases.parent()).channel
    audience = Audience("T1", CHANNEL, "UADMIN01", response_url="https://hooks.slack.test/forget")
    command = SlashCommand(
        "T1", CHANNEL, "UADMIN01", "forget", audience.response_url)
    cases.services.channel_admin.command(command)
    [asked] = cases.chat.of("ask_to_forget")
    answer = asked.args[1]
    cases.services.channel_admin.forget(channel, "UADMIN01", audience, answer)
    cases.services.channel_admin.forget(channel, "UADMIN01", audience, answer)
    assert len(cases.chat.of("post_notice")) == 1
    settled = [s.args[1].split(":")[0] for s in cases.chat.of("settle_question")]
    assert settled == ["🧹 Done", "This question was already answered."]
    cases.services.channel_admin.command(command)
    stale = cases.chat.of("ask_to_forget")[-1].args[1]
    cases.clock.advance(minutes=16)
    cases.services.channel_admin.forget(channel, "UADMIN01", audience, stale)
    assert "expired" in cases.chat.of("settle_question")[-1].args[1] and len(cases.chat.of("post_notice")) == 1


def test_the_sweep_leaves_a_switched_off_channels_forks_alone():
    cases = channel_cases(admins={"UADMIN01"})
    fork = cases.open_fork("topic")
    cases.say("UBOB0001", "hello", thread_ts=fork.root_ts)
    asked = len(cases.model.inputs)
    assert cases.services.channel_admin.save(fork.channel, "UADMIN01", {"enabled": "off"}) == {}
    for days in (2, 8):
        cases.clock.advance(days=days)
        cases.services.sweep()
    assert not cases.chat.of("remind") and len(cases.model.inputs) == asked
    assert cases.fork(fork.number).status.value == "open"
    assert cases.services.channel_admin.save(fork.channel, "UADMIN01", {"enabled": "on"}) == {}
    cases.services.sweep()
    assert cases.fork(fork.number).status.value == "merged"  # back on: its expiry applies again


def test_inputs_left_as_shown_keep_the_value_in_effect_even_one_the_modal_would_not_take():
    odd = ChannelSettings(None, "claude-sonnet-5-5", 0, "anyone", True, 8 * 86400.0, 7 * 86400.0, (), False)
    shown_as_is = {"idle_reminder": "8d", "expiry": "7d", "fork_token_budget": None, "tools": [],
                   "instructions": "hello"}
    asked, errors = read_form(shown_as_is, odd, CHOICES)
    assert errors == {} and asked.instructions == "hello" and asked.idle_reminder == 8 * 86400.0
    _, errors = read_form({**shown_as_is, "expiry": "6d"}, odd, CHOICES)  # changed: now it must make sense
    assert "before the expiry" in errors["idle_reminder"]


@pytest.mark.parametrize("typed", ["0.4s", "59s", "0"])
def test_a_reminder_or_expiry_under_a_minute_is_refused(typed):
    _, errors = read_form({"expiry": typed}, DEFAULTS, CHOICES)
    assert set(errors) == {"expiry"}


def test_a_forget_answer_no_question_of_ours_carried_deletes_nothing():
    cases = channel_cases(admins={"UADMIN01"})
    cases.say("UALICE01", "note this", mention=True)
    channel = cases.store.sessions.session(cases.parent()).channel
    now = int(cases.clock().replace(tzinfo=timezone.utc).timestamp())
    cases.services.channel_admin.forget(channel, "UADMIN01", Audience("T1", CHANNEL, "UADMIN01"), f"{now}:made-up")
    assert "expired" in cases.chat.of("settle_question")[-1].args[1] and not cases.chat.of("post_notice")
    assert cases.turns(cases.parent())
