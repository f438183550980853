"""What a team pays, end to end through the fakes: every answer priced as it is recorded, `/context` with
today's and this month's estimated spend, forks' part and what caching saved; the monthly cap at 80 % (one
notice) and at 100 % (a private answer naming the cap and who can raise it, no model request, while ✅
still merges); a raised cap, on another replica, and a new month lifting it at once; App Home's months for
admins only; the cap in the settings modal."""
import json
from datetime import datetime

import pytest

from ..fakes.anthropic_api import Script, is_merge_request, request_texts
from bot.domain.context import UNANSWERED
from bot.domain.model import Role

from ..harness import CHANNEL, GENERAL, RunningBot, wait_until

# the default model, claude-sonnet-5-5: $2 / MTok in, $10 out, $0.10 cache reads, $2.50 5-minute writes
DOLLAR = 500_000  # input tokens that cost one dollar


def costing(dollars: float, text: str = "ok") -> Script:
    return Script(text=text, usage={"input_tokens": round(dollars * DOLLAR), "output_tokens": 0})


def mention(bot, slack, claude, text="what now?", user="UALICE01") -> bool:
    """A mention; True if it made a model request."""
    before = len(claude.requests)
    bot.say(user, text, mention=True)
    bot.settled()
    return len(claude.requests) > before


def context_text(bot, slack) -> str:
    before = len(slack.responses)
    bot.slash("/context")
    return wait_until(lambda: [r for r in slack.responses[before:] if "conversation" in r.get("text", "")])[0]["text"]


def private(slack, since: int = 0) -> list[str]:
    return [c["text"] for c in slack.calls_to("chat.postEphemeral")[since:]] + [
        r.get("text", "") for r in slack.responses if r.get("response_type") == "ephemeral"]


def notices(slack) -> list[str]:
    return [p["text"] for p in slack.posts(CHANNEL, top_level=True) if p.get("text", "").startswith("💸")]


def test_context_shows_today_and_this_month_in_dollars_with_forks_and_what_caching_saved(bot, slack, claude):
    claude.script(Script(text="ok", usage={"input_tokens": 100_000, "output_tokens": 1_000,
                                           "cache_read_input_tokens": 200_000, "cache_creation_input_tokens": 40_000}))
    mention(bot, slack, claude)  # $0.20 + $0.01 + $0.02 + $0.10 = $0.33; uncached $0.69
    claude.script(costing(0.10))
    bot.slash("/fork", "--fresh pricing tiers")
    bot.fork_root()
    bot.settled()
    text = context_text(bot, slack)
    month = bot.clock.now.strftime("%B %Y")
    assert "estimated from the usage Claude's API reported" in text
    assert f"today $0.43 · {month} $0.43, of which forks $0.10; caching saved $0.36 this month" in text
    answer = [t for t in bot.store.turns.turns(bot.store.sessions.parent_id(GENERAL)) if t.role is Role.ASSISTANT]
    assert [t.usage.cost_micros for t in answer] == [330_000]  # the answer was priced as it was recorded
    assert answer[0].usage.uncached_micros == 690_000


@pytest.mark.settings(threadfork_model="claude-unpriced-test")
def test_a_model_missing_from_the_price_table_shows_n_a_never_a_guess(bot, slack, claude):
    mention(bot, slack, claude)
    text = context_text(bot, slack)
    assert "today n/a" in text and "n/a for 1 call by a model missing from the price table" in text
    assert "$0.00" not in text.split("today", 1)[1].split("·", 1)[0]


@pytest.mark.settings(threadfork_monthly_spend_cap_usd=0.1)
def test_at_80_percent_one_notice_and_at_the_cap_new_turns_and_forks_are_refused_but_a_merge_goes_on(bot, slack,
                                                                                                    claude):
    slack.person("UALICE01")
    bot.slash("/fork", "--fresh pricing tiers")  # open before the cap, answered at once (a few tokens)
    root = bot.fork_root()
    bot.settled()
    claude.script(costing(0.08))
    assert mention(bot, slack, claude, "big question")
    [notice] = wait_until(lambda: notices(slack), message="the 80 % notice")
    assert "80%" in notice and "cap" in notice and "$0.10" in notice and "estimated" in notice
    claude.script(costing(0.02))
    assert mention(bot, slack, claude, "one more")  # asked under the cap: answered
    seen = len(slack.calls_to("chat.postEphemeral"))
    requests = len(claude.requests)

    assert not mention(bot, slack, claude, "and now?")  # at the cap: no model request
    bot.say("UBOB0001", "in the fork", thread_ts=root)
    bot.settled()
    assert len(claude.requests) == requests
    told = private(slack, seen)
    assert len([t for t in told if "reached its monthly spend cap" in t]) == 2
    assert all("`/threadfork`" in t and "workspace admin or owner" in t for t in told)
    bot.slash("/fork", "--fresh another")
    bot.settled()
    assert bot.store.sessions.fork_by_number(GENERAL, 2) is None
    assert any("cap" in r.get("text", "") for r in slack.responses)
    assert len(claude.requests) == requests

    bot.react("UCAROL01", root)  # ✅ still merges: no fork is stranded
    wait_until(lambda: any(is_merge_request(r) for r in claude.requests[requests:]), message="the merge request")
    bot.settled()
    assert bot.store.sessions.fork_by_number(GENERAL, 1).status.value == "merged"
    assert len(notices(slack)) == 1  # one notice, though the cap was reached since


def test_a_raised_cap_lifts_it_at_once_on_every_replica(slack, claude, migrated_sqlite_url):
    first = RunningBot(slack, claude, migrated_sqlite_url)
    second = RunningBot(slack, claude, migrated_sqlite_url)
    try:
        admin = "UADMIN01"
        slack.person(admin, is_admin=True)
        save_cap(first, slack, admin, "0.1")
        claude.script(costing(0.12))
        assert mention(first, slack, claude, "expensive")
        before = len(claude.requests)
        refused_ts = second.say("UALICE01", "refused on the other replica", mention=True)
        second.settled()
        assert len(claude.requests) == before
        assert any("reached its monthly spend cap" in t and "kept" in t for t in private(slack))
        save_cap(first, slack, admin, "5")
        assert mention(second, slack, claude, "answered at once")
        assert "refused on the other replica" in json.dumps(claude.requests[-1]["messages"])  # kept in the history
        second.react("UALICE01", refused_ts, "repeat")  # and answered on request, now the cap allows it
        wait_until(lambda: len(claude.requests) > before + 1, message="the retried answer")
        second.settled()
        retried = request_texts(claude.requests[-1])
        assert retried[-1] == UNANSWERED and any(t.endswith("refused on the other replica") for t in retried)
    finally:
        first.stop()
        second.stop()


def save_cap(bot, slack, admin: str, cap: str) -> None:
    before = len(slack.opened_views("threadfork_settings"))
    bot.slash("/threadfork", "", user=admin)
    modal = wait_until(lambda: slack.opened_views("threadfork_settings")[before:], message="the settings modal")[0]
    reply = bot.submit_view(modal, {"monthly_spend_cap_usd": cap})
    assert reply.status == 200 and not reply.body, reply.body
    bot.settled()


@pytest.mark.settings(threadfork_monthly_spend_cap_usd=0.1)
def test_a_new_month_lifts_the_cap_at_once(bot, slack, claude):
    bot.clock.now = datetime(2026, 12, 31, 22, 0)
    claude.script(costing(0.15))
    assert mention(bot, slack, claude, "end of year")
    assert not mention(bot, slack, claude, "refused")
    bot.clock.now = datetime(2027, 1, 1, 0, 5)
    assert mention(bot, slack, claude, "happy new year")


@pytest.mark.settings(threadfork_monthly_spend_cap_usd=0.1)
def test_a_retry_at_the_cap_makes_no_model_call(bot, slack, claude):
    claude.script(Script(status=529, error_type="overloaded_error", error_message="Overloaded"))
    failed_ts = bot.say("UALICE01", "this one fails", mention=True)
    bot.settled()
    claude.script(costing(0.11))
    assert mention(bot, slack, claude, "expensive")
    requests = len(claude.requests)
    bot.react("UALICE01", failed_ts, "repeat")
    bot.settled()
    assert len(claude.requests) == requests
    assert any("reached its monthly spend cap" in t for t in private(slack))


@pytest.mark.settings(threadfork_monthly_spend_cap_usd=0.1)
def test_a_message_kept_at_the_cap_keeps_its_files_and_a_retry_once_the_cap_is_raised_reads_them(bot, slack,
                                                                                                   claude):
    slack.person("UADMIN01", is_admin=True)
    claude.script(costing(0.11))
    assert mention(bot, slack, claude, "expensive")
    log = slack.share_file("server.log", b"12:01 ERROR disk full on db-2\n", "text/plain", "text")
    kept_ts = bot.say("UBOB0001", "what does this log say?", mention=True, files=[log])
    bot.settled()
    assert len(claude.requests) == 1 and any("Your message is kept" in t for t in private(slack))
    save_cap(bot, slack, "UADMIN01", "5")
    bot.react("UBOB0001", kept_ts, "repeat")
    wait_until(lambda: len(claude.requests) == 2, message="the kept message answered")
    bot.settled()
    texts = request_texts(claude.requests[1])
    assert "[File “server.log” (text/plain):]\n12:01 ERROR disk full on db-2\n" in texts
    assert any(t.endswith("\nwhat does this log say?") for t in texts)


def test_app_home_shows_each_channels_month_to_admins_only(bot, slack, claude):
    slack.person("UADMIN01", is_admin=True)
    slack.person("UALICE01")
    claude.script(costing(0.20))
    mention(bot, slack, claude)
    for user, channel, shown in (("UADMIN01", "D0HOME001", True), ("UALICE01", "D0HOME002", False)):
        before = len(slack.calls_to("views.publish"))
        bot.event({"type": "app_home_opened", "user": user, "channel": channel, "tab": "home",
                   "event_ts": f"1.{before + 1}"})
        publish = wait_until(lambda: slack.calls_to("views.publish")[before:])[0]
        view = json.dumps(publish["view"])
        assert ("Spend this month" in view and f"<#{CHANNEL}>: $0.20" in view) is shown, view


def test_the_settings_modal_shows_the_cap_in_effect_and_refuses_nonsense(bot, slack):
    slack.person("UADMIN01", is_admin=True)
    bot.slash("/threadfork", "", user="UADMIN01")
    modal = wait_until(lambda: slack.opened_views("threadfork_settings"))[0]
    cap = next(b for b in modal.view["blocks"] if b.get("block_id") == "monthly_spend_cap_usd")
    assert "initial_value" not in cap["element"] and "Default: no cap." in cap["hint"]["text"]
    refused = bot.submit_view(modal, {"monthly_spend_cap_usd": "lots"}).json()
    assert refused["response_action"] == "errors" and "dollars" in refused["errors"]["monthly_spend_cap_usd"]
    assert bot.submit_view(modal, {"monthly_spend_cap_usd": "$25"}).status == 200
    bot.settled()
    notice = [p["text"] for p in slack.posts(CHANNEL, top_level=True) if "changed Threadfork's settings" in p["text"]]
    assert notice and "monthly spend cap → $25.00 a month" in notice[-1]
    assert bot.store.channel_settings.of(GENERAL).monthly_spend_cap_usd == 25.0
