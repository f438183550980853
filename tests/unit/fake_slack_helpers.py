"""Shared by the tests of the fake Slack: a started strict fake, a client per token, and the app's side
reduced to scripted HTTP answers so that what Slack would deliver can be read without running the app."""
import json
import urllib.parse
from dataclasses import dataclass

import pytest
from slack_sdk import WebClient
from slack_sdk.errors import SlackApiError

from tests.fakes.slack_actor import SlackActor
from tests.fakes.slack_api import BOT_TOKEN, FakeSlack


def strict_fake():
    """For a `slack` fixture: a started fake with the default team's token, checked as the suite's fixture
    checks it (a test clears the violations it provoked on purpose)."""
    fake = FakeSlack(bot_token=BOT_TOKEN).start()
    yield fake
    fake.stop()
    assert fake.violations == []


def client(fake, token=BOT_TOKEN) -> WebClient:
    return WebClient(token=token, base_url=fake.api_url)


def refusal(call) -> str:
    with pytest.raises(SlackApiError) as refused:
        call()
    return refused.value.response["error"]


@dataclass
class Answer:
    status: int
    body: str


class ScriptedApp(SlackActor):
    """Receives what Slack delivers (decoded, in `received`) and answers `answer` (status, body)."""

    def __init__(self, slack, answer=(200, "")):
        self.slack = slack
        self.url = "http://app.invalid"
        self.answer = answer
        self.received: list[dict] = []

    def post(self, body: bytes, content_type: str, headers=None) -> Answer:
        if content_type == "application/json":
            self.received.append(json.loads(body))
        else:
            form = dict(urllib.parse.parse_qsl(body.decode()))
            self.received.append(json.loads(form["payload"]) if "payload" in form else form)
        return Answer(*self.answer)
