"""The fake Slack is as strict as Slack about which methods exist and what they require."""
import http.client
import json
import urllib.error
import urllib.request

import pytest

from tests.fakes.slack_api import FakeSlack


def call(fake: FakeSlack, method: str, **args) -> dict:
    request = urllib.request.Request(fake.api_url + method, data=json.dumps(args).encode(), headers={
        "Content-Type": "application/json; charset=utf-8", "Authorization": "Bearer xoxb-test"})
    with urllib.request.urlopen(request, timeout=5) as response:
        return json.loads(response.read())


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
