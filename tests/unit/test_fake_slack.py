"""The fake Slack is as strict as Slack about which methods exist, what they require, and which
payloads (Block Kit, views, texts) it accepts."""
import http.client
import json
import urllib.error
import urllib.request

import pytest

from tests.fakes.block_kit import blocks_problems, view_problems
from tests.fakes.slack_api import FakeSlack


def call(fake: FakeSlack, method: str, **args) -> dict:
    request = urllib.request.Request(fake.api_url + method, data=json.dumps(args).encode(), headers={
        "Content-Type": "application/json; charset=utf-8", "Authorization": "Bearer xoxb-test"})
    with urllib.request.urlopen(request, timeout=5) as response:
        return json.loads(response.read())


def section(text, kind="mrkdwn"):
    return {"type": "section", "text": {"type": kind, "text": text}}


def button(label):
    return {"type": "button", "text": {"type": "plain_text", "text": label}, "action_id": "a", "value": "1"}


def test_a_method_slack_does_not_have_is_refused_and_recorded():
    fake = FakeSlack().start()
    try:
        assert call(fake, "chat.postMesage", channel="C1", text="hi") == {"ok": False, "error": "unknown_method"}
        assert fake.violations == ["chat.postMesage: no such method"]
        assert call(fake, "chat.postMessage", channel="C1", text="hi")["ok"] is True
        assert call(fake, "apps.connections.open")["ok"] is True  # newer than the OpenAPI file
        assert call(fake, "chat.update", channel="C1") == {"ok": False, "error": "invalid_arguments"}
        assert fake.violations[1:] == ["chat.update: missing ['ts']"]
    finally:
        fake.stop()


def test_a_scripted_failure_can_land_first_reset_the_connection_or_refuse_a_long_update():
    fake = FakeSlack().start()
    try:
        ts = call(fake, "chat.postMessage", channel="C1", text="hi")["ts"]
        fake.fail("chat.update", status=500, applied=True)
        with pytest.raises(urllib.error.HTTPError) as refused:
            call(fake, "chat.update", channel="C1", ts=ts, text="changed")
        assert refused.value.code == 500 and fake.messages[ts]["text"] == "changed"  # it landed all the same
        fake.fail("chat.postMessage", drop=True)
        with pytest.raises((ConnectionError, http.client.HTTPException)):
            call(fake, "chat.postMessage", channel="C1", text="lost")
        assert [m["text"] for m in fake.posts()] == ["changed"]  # not applied: nothing posted
        assert call(fake, "chat.update", channel="C1", ts=ts, markdown_text="é" * 2001) == {
            "ok": False, "error": "msg_too_long"}
    finally:
        fake.stop()


def test_blocks_and_texts_slack_would_refuse_are_refused_and_recorded():
    fake = FakeSlack().start()
    try:
        assert call(fake, "chat.postMessage", channel="C1", text="t", blocks=[section("x" * 3001)]) == \
            {"ok": False, "error": "invalid_blocks"}
        assert call(fake, "chat.postMessage", channel="C1", text="t", blocks="not json") == \
            {"ok": False, "error": "invalid_blocks_format"}
        assert call(fake, "chat.postMessage", channel="C1", text="x" * 40_001) == {"ok": False, "error": "msg_too_long"}
        assert call(fake, "views.publish", user_id="U1", view={"type": "home", "blocks": [section("x")] * 101}) == \
            {"ok": False, "error": "invalid_arguments"}
        assert len(fake.violations) == 4
        assert call(fake, "chat.postMessage", channel="C1", text="t", blocks=[section("x" * 3000)])["ok"] is True
        assert call(fake, "views.publish", user_id="U1", view={"type": "home", "blocks": [section("x")] * 100})["ok"]
        assert len(fake.violations) == 4
    finally:
        fake.stop()


def test_the_block_kit_checks_cover_slacks_documented_limits():
    assert blocks_problems([section("x" * 3000), {"type": "header", "text": {"type": "plain_text", "text": "h" * 150}},
                            {"type": "actions", "elements": [button("b" * 75)]},
                            {"type": "markdown", "text": "m" * 12_000}]) == []
    assert blocks_problems([section("x" * 3001)])
    assert blocks_problems([{"type": "header", "text": {"type": "plain_text", "text": "h" * 151}}])
    assert blocks_problems([{"type": "actions", "elements": [button("b" * 76)]}])
    assert blocks_problems([{"type": "markdown", "text": "m" * 12_001}])
    assert blocks_problems([{"type": "markdown", "text": "m" * 6_001}] * 2)  # 12,000 for all markdown blocks
    assert blocks_problems([{"type": "markdown", "text": ""}])
    assert blocks_problems([section("")])  # Slack refuses empty text
    assert blocks_problems([section("x")] * 51) and not blocks_problems([section("x")] * 50)
    assert blocks_problems([{"type": "sectoin", "text": {"type": "mrkdwn", "text": "x"}}])
    assert blocks_problems([{**section("x"), "colour": "red"}])  # a key Block Kit does not have
    assert view_problems({"type": "home", "blocks": [section("x" * 3001)]})
    assert view_problems({"type": "hmoe", "blocks": [section("x")]})
