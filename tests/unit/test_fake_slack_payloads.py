"""The payloads the harness sends are Slack's: Bolt itself reads their type, team, enterprise, trigger and
content as it reads Slack's, for the default team and any other; uninstalling revokes the token before
Slack says so; a shortcut or click on a message Slack has carries that message as Slack has it."""
import json
import time

import pytest
from slack_bolt import App, BoltRequest
from slack_bolt.authorization import AuthorizeResult
from slack_sdk.signature import SignatureVerifier

from tests.fakes.slack_api import BOT_USER_ID, TEAM_ID
from tests.fakes.slack_payloads import share_attachment

from .fake_slack_helpers import Answer, ScriptedApp, client, refusal, strict_fake


@pytest.fixture
def slack():
    yield from strict_fake()


SECRET = "test-signing-secret-not-real"
CHANNEL = "C0GENERAL01"


class BoltDriven(ScriptedApp):
    """Delivers each payload, signed, to a Bolt app in this process (listeners run before the answer)."""

    def __init__(self, slack):
        super().__init__(slack)
        self.authorized: list[tuple] = []
        self.heard: list[tuple] = []
        self.bolt = App(signing_secret=SECRET, authorize=self._authorizer(), process_before_response=True,
                        request_verification_enabled=True)
        self._listen()

    def post(self, body: bytes, content_type: str, headers=None) -> Answer:
        super().post(body, content_type)
        timestamp = str(int(time.time()))
        signature = SignatureVerifier(SECRET).generate_signature(timestamp=timestamp, body=body.decode())
        response = self.bolt.dispatch(BoltRequest(body=body.decode(), headers={
            "content-type": [content_type], "x-slack-request-timestamp": [timestamp],
            "x-slack-signature": [signature]}))
        return Answer(response.status, response.body)

    def _authorizer(self):
        def authorize(enterprise_id, team_id, user_id):  # Bolt passes arguments by these names
            self.authorized.append((enterprise_id, team_id))
            team = self.slack.team(team_id)
            return AuthorizeResult(enterprise_id=enterprise_id, team_id=team_id, bot_token=team.bot_token,
                                   bot_user_id=team.bot_user_id, bot_id=team.bot_id)
        return authorize

    def _listen(self):
        bolt, heard = self.bolt, self.heard

        @bolt.event("message")
        def message(event, context):
            heard.append(("message", context.team_id, event["text"]))

        @bolt.event("app_uninstalled")
        def uninstalled(context):
            heard.append(("app_uninstalled", context.team_id, None))

        @bolt.event("tokens_revoked")
        def revoked(event, context):
            heard.append(("tokens_revoked", context.team_id, event["tokens"]))

        @bolt.command("/fork")
        def fork(ack, command, context):
            ack()
            heard.append(("command", context.team_id, command["trigger_id"]))

        @bolt.action("merge")
        def merge(ack, body, context):
            ack()
            heard.append(("action", context.team_id, body["actions"][0]["block_id"]))

        @bolt.shortcut("fork_from_here")
        def shortcut(ack, shortcut, context):
            ack()
            heard.append(("shortcut", context.team_id, shortcut["message"]["text"]))

        @bolt.view("fork_modal")
        def submitted(ack, view, context):
            ack(response_action="errors", errors={"topic": "Say more"})
            heard.append(("view", context.team_id, view["state"]["values"]["topic"]["text"]["value"]))


@pytest.fixture
def app(slack):
    return BoltDriven(slack)


def test_bolt_reads_every_interaction_as_coming_from_its_own_team(slack, app):
    other = slack.add_team(enterprise_id="E0ORG0001")
    for team in (None, other):
        app.say("UALICE01", "hi", team=team)
        assert app.slash("/fork", team=team).status == 200
        assert app.click("merge", "1", team=team).status == 200
        assert app.shortcut("fork_from_here", "1800000001.000001", team=team).status == 200
    assert [kind for kind, _, _ in app.heard] == ["message", "command", "action", "shortcut"] * 2
    assert [team for _, team, _ in app.heard] == [TEAM_ID] * 4 + [other.id] * 4
    assert app.authorized[4:] == [("E0ORG0001", other.id)] * 4 and app.authorized[0] == (None, TEAM_ID)
    sent = app.received[4]
    assert sent["authorizations"][0]["user_id"] == other.bot_user_id and sent["enterprise_id"] == "E0ORG0001"


def test_a_submission_goes_through_bolt_and_bolts_errors_reach_the_modal(slack, app):
    app.slash("/fork")
    topic = {"type": "input", "block_id": "topic", "label": {"type": "plain_text", "text": "Topic"},
             "element": {"type": "plain_text_input", "action_id": "text"}}
    view = client(slack).views_open(trigger_id=app.heard[-1][2], view={
        "type": "modal", "callback_id": "fork_modal", "title": {"type": "plain_text", "text": "Fork"},
        "submit": {"type": "plain_text", "text": "Open"}, "blocks": [topic]})["view"]
    reply = app.submit_view(view["id"], {"topic": "budget"})
    assert json.loads(reply.body) == {"response_action": "errors", "errors": {"topic": "Say more"}}
    assert app.heard[-1] == ("view", TEAM_ID, "budget") and slack.view(view["id"]).errors == {"topic": "Say more"}


def test_uninstalling_revokes_the_token_first_then_slack_says_tokens_revoked_and_app_uninstalled(slack, app):
    other = slack.add_team()
    assert app.uninstall(other).status == 200
    assert [(kind, team) for kind, team, _ in app.heard] == [("tokens_revoked", other.id), ("app_uninstalled", other.id)]
    assert app.heard[0][2] == {"oauth": [], "bot": [other.bot_user_id]}
    assert refusal(lambda: client(slack, other.bot_token).auth_test()) == "token_revoked"
    assert client(slack).auth_test()["ok"]
    app.tokens_revoked(bot=[], oauth=["UALICE01"])  # a person's token only: the bot's stays good
    assert app.heard[-1] == ("tokens_revoked", TEAM_ID, {"oauth": ["UALICE01"], "bot": []})
    assert client(slack).auth_test()["ok"]


def test_a_click_or_shortcut_on_a_message_slack_has_carries_that_message(slack, app):
    posted = client(slack).chat_postMessage(channel=CHANNEL, text="Fork #1", blocks=[
        {"type": "section", "text": {"type": "mrkdwn", "text": "Fork #1"}},
        {"type": "actions", "block_id": "fork_7", "elements": [
            {"type": "button", "action_id": "merge", "value": "7", "text": {"type": "plain_text", "text": "Merge"}}]}])
    app.click("merge", message_ts=posted["ts"])
    clicked = app.received[-1]
    assert clicked["actions"][0]["block_id"] == "fork_7" and clicked["actions"][0]["value"] == "7"
    assert clicked["message"]["user"] == BOT_USER_ID and clicked["message"]["blocks"][1]["block_id"] == "fork_7"
    said = app.say("UBOB0001", "the real words")
    app.shortcut("fork_from_here", said)
    assert app.heard[-1] == ("shortcut", TEAM_ID, "the real words")
    app.react("UALICE01", said)
    assert app.received[-1]["event"]["item_user"] == "UBOB0001"
    app.react("UALICE01", posted["ts"])
    assert app.received[-1]["event"]["item_user"] == BOT_USER_ID


def test_the_default_teams_envelope_is_what_the_harness_always_sent(slack, app):
    app.event({"type": "reaction_added", "user": "UALICE01", "reaction": "eyes",
               "item": {"type": "message", "channel": CHANNEL, "ts": "1.0"}, "event_ts": "1.0"}, event_id="EvFIXED01")
    sent = app.received[-1]
    assert {k: sent[k] for k in ("team_id", "api_app_id", "type", "event_id", "is_ext_shared_channel")} == {
        "team_id": TEAM_ID, "api_app_id": "A0THREADFORK", "type": "event_callback", "event_id": "EvFIXED01",
        "is_ext_shared_channel": False}
    assert sent["authorizations"] == [{"enterprise_id": None, "team_id": TEAM_ID, "user_id": BOT_USER_ID,
                                       "is_bot": True, "is_enterprise_install": False}]


def test_a_share_attachment_carries_the_shared_message_its_author_link_blocks_and_files(slack):
    team = slack.team()
    files = [{"id": "F1", "name": "a.png"}]
    message = {"type": "message", "user": "UBOB0001", "text": "ship it", "ts": "1700000000.000100",
               "channel": "C0OPS0001", "files": files}
    share = share_attachment(message, team=team, author_name="Bob Builder", author_subname="bob")
    assert share["is_share"] is True and share["text"] == "ship it" and share["files"] == files
    assert (share["author_id"], share["author_name"], share["author_subname"]) == ("UBOB0001", "Bob Builder", "bob")
    assert share["from_url"].endswith("/archives/C0OPS0001/p1700000000000100") and share["ts"] == message["ts"]
    [shown] = share["message_blocks"]
    assert (shown["channel"], shown["ts"]) == ("C0OPS0001", message["ts"])
    assert shown["message"]["blocks"][0]["elements"][0]["elements"] == [{"type": "text", "text": "ship it"}]
    assert share["fallback"].endswith("bob: ship it") and share["mrkdwn_in"] == ["text"]
