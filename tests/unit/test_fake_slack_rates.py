"""The fake Slack rate-limits as Slack does (docs.slack.dev/apis/web-api/rate-limits): each method's tier per
workspace, chat.postMessage per channel, the non-Marketplace limits of conversations.replies / history; a call
over the limit is answered 429 `ratelimited` with Retry-After, and taken again once that time has passed."""
import json
import urllib.request
from urllib.error import HTTPError

import pytest

from tests.fakes.slack_api import BOT_TOKEN, TEAM_ID
from tests.fakes.slack_rates import TIERS, RateClock

from .fake_slack_helpers import ScriptedApp, strict_fake

CHANNEL = "C0GENERAL01"


@pytest.fixture
def slack():
    yield from strict_fake()  # its limiter's clock runs at real speed and is moved by hand below


def call(slack, method: str, token: str = BOT_TOKEN, **args) -> tuple[int, dict, str | None]:
    """(HTTP status, body, Retry-After) of one Web API call, made as slack-sdk makes it, without its retries."""
    request = urllib.request.Request(slack.api_url + method, data=json.dumps(args).encode(), method="POST",
                                     headers={"Authorization": f"Bearer {token}",
                                              "Content-Type": "application/json; charset=utf-8"})
    try:
        with urllib.request.urlopen(request, timeout=5) as answer:
            return answer.status, json.loads(answer.read()), answer.headers.get("Retry-After")
    except HTTPError as refused:
        return refused.code, json.loads(refused.read()), refused.headers.get("Retry-After")


def burst(slack, method: str, count: int, **args) -> list[int]:
    return [call(slack, method, **args)[0] for _ in range(count)]


def test_the_committed_tiers_are_the_ones_the_method_pages_give():
    assert (TIERS["chat.startStream"], TIERS["chat.stopStream"], TIERS["chat.appendStream"]) == ("tier2", "tier2", "tier4")
    assert (TIERS["chat.update"], TIERS["conversations.replies"], TIERS["chat.postMessage"]) == ("tier3", "tier3", "special")
    assert TIERS["users.info"] == "tier4" and TIERS["reactions.remove"] == "tier2"


def test_a_tier_2_method_takes_20_calls_a_minute_then_answers_429_ratelimited_with_retry_after(slack):
    statuses = burst(slack, "chat.startStream", 20, channel=CHANNEL, thread_ts="1.000001", markdown_text="hi")
    assert statuses == [200] * 20
    status, body, retry_after = call(slack, "chat.startStream", channel=CHANNEL, thread_ts="1.000001")
    assert (status, body, retry_after) == (429, {"ok": False, "error": "ratelimited"}, "60")
    slack.rates.clock.advance(30)
    assert call(slack, "chat.startStream", channel=CHANNEL, thread_ts="1.000001")[2] == "30"
    slack.rates.clock.advance(30)
    assert call(slack, "chat.startStream", channel=CHANNEL, thread_ts="1.000001", markdown_text="hi")[0] == 200
    assert [r.error for r in slack.refusals] == ["ratelimited", "ratelimited"]


@pytest.mark.parametrize("method, per_minute, args", [
    ("apps.uninstall", 1, {}),  # Tier 1
    ("chat.update", 50, {"channel": CHANNEL, "ts": "1.000001", "text": "x"}),  # Tier 3
    ("users.info", 100, {"user": "UALICE01"}),  # Tier 4
    ("reactions.remove", 20, {"name": "eyes", "channel": CHANNEL, "timestamp": "1.000001"}),  # Tier 2
])
def test_each_tier_refuses_the_call_past_its_calls_a_minute(slack, method, per_minute, args):
    assert set(burst(slack, method, per_minute, **args)) <= {200}
    assert call(slack, method, **args)[0] == 429


def test_limits_are_per_workspace_and_per_method(slack):
    other = slack.add_team()
    burst(slack, "chat.stopStream", 20, channel=CHANNEL, ts="1.000001")
    assert call(slack, "chat.stopStream", channel=CHANNEL, ts="1.000001")[0] == 429
    assert call(slack, "chat.stopStream", other.bot_token, channel=CHANNEL, ts="1.000001")[0] == 200
    assert call(slack, "chat.startStream", channel=CHANNEL, thread_ts="1.000001", markdown_text="hi")[0] == 200


def test_chat_post_message_takes_a_short_burst_per_channel_then_one_a_second(slack):
    assert burst(slack, "chat.postMessage", 5, channel=CHANNEL, text="hi") == [200] * 5
    status, body, retry_after = call(slack, "chat.postMessage", channel=CHANNEL, text="hi")
    assert (status, body["error"], retry_after) == (429, "ratelimited", "1")
    assert call(slack, "chat.postMessage", channel="C0OTHER0001", text="hi")[0] == 200  # another channel
    slack.rates.clock.advance(1)
    assert burst(slack, "chat.postMessage", 2, channel=CHANNEL, text="hi") == [200, 429]


def test_a_non_marketplace_app_reads_a_thread_once_a_minute_15_messages_a_page(slack):
    app = ScriptedApp(slack)
    root = app.say("UALICE01", "the root")
    for n in range(20):
        app.say("UBOB0001", f"reply {n}", thread_ts=root)
    status, page, _ = call(slack, "conversations.replies", channel=CHANNEL, ts=root, limit=200)
    assert status == 200 and len(page["messages"]) == 21 and not page["has_more"]  # a Marketplace app's page
    slack.rates.non_marketplace = True
    slack.rates.clock.advance(60)
    status, page, _ = call(slack, "conversations.replies", channel=CHANNEL, ts=root, limit=200)
    assert status == 200 and len(page["messages"]) == 15 and page["has_more"]
    cursor = page["response_metadata"]["next_cursor"]
    status, body, retry_after = call(slack, "conversations.replies", channel=CHANNEL, ts=root, cursor=cursor)
    assert (status, body["error"], retry_after) == (429, "ratelimited", "60")
    slack.rates.clock.advance(60)
    status, page, _ = call(slack, "conversations.replies", channel=CHANNEL, ts=root, cursor=cursor, limit=200)
    assert status == 200 and [m["text"] for m in page["messages"][1:]] == [f"reply {n}" for n in range(14, 20)]
    assert call(slack, "conversations.history", channel=CHANNEL)[0] == 200
    assert call(slack, "conversations.history", channel=CHANNEL)[0] == 429


def test_a_faster_clock_says_retry_after_in_real_seconds(slack):
    slack.rates.clock = RateClock(speed=20)
    slack.rates.non_marketplace = True
    call(slack, "conversations.history", channel=CHANNEL)
    assert call(slack, "conversations.history", channel=CHANNEL)[2] == "3"  # a minute of the fake's, at 20x


def test_an_allowance_needs_a_reason_and_lifts_one_methods_limit(slack):
    with pytest.raises(ValueError):
        slack.rates.allow("chat.startStream", 100, "")
    slack.rates.allow("chat.startStream", 40, "this test starts 40 streams at once")
    assert burst(slack, "chat.startStream", 41, channel=CHANNEL, thread_ts="1.000001", markdown_text="x")[-2:] == [200, 429]


def test_the_limits_can_be_off_and_a_reset_fake_starts_with_fresh_windows(slack):
    burst(slack, "chat.startStream", 21, channel=CHANNEL, thread_ts="1.000001", markdown_text="x")
    slack.reset()
    assert slack.rates.on and call(slack, "chat.startStream", channel=CHANNEL, thread_ts="1.000001",
                                   markdown_text="x")[0] == 200
    slack.rates.on = False
    assert set(burst(slack, "chat.startStream", 30, channel=CHANNEL, thread_ts="1.000001", markdown_text="x")) == {200}


def test_a_workspace_is_whichever_team_the_token_names(slack):
    assert TEAM_ID and call(slack, "auth.test")[0] == 200  # Special, no number on its page: not limited
    assert set(burst(slack, "auth.test", 30)) == {200}
