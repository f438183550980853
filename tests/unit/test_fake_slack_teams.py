"""The fake Slack serves several workspaces as Slack does: each team's token speaks for that team only,
a token Slack never issued is refused, a revoked one is refused for good, and people carry their
team's roles."""
import urllib.request

import pytest
from slack_sdk import WebClient

from tests.fakes.slack_api import APP_TOKEN, BOT_ID, BOT_TOKEN, BOT_USER_ID, TEAM_ID, FakeSlack

from .fake_slack_helpers import refusal, strict_fake


@pytest.fixture
def slack():
    yield from strict_fake()


def client(fake, token):
    return WebClient(token=token, base_url=fake.api_url)


def test_the_default_team_is_what_it_always_was_and_auth_test_answers_for_the_tokens_own_team(slack):
    mine = client(slack, BOT_TOKEN).auth_test()
    assert (mine["team_id"], mine["user_id"], mine["bot_id"]) == (TEAM_ID, BOT_USER_ID, BOT_ID)
    other = slack.add_team(name="Other")
    theirs = client(slack, other.bot_token).auth_test()
    assert (theirs["team_id"], theirs["user_id"], theirs["bot_id"], theirs["team"]) == (
        other.id, other.bot_user_id, other.bot_id, "Other")
    assert len({TEAM_ID, other.id}) == 2 and other.bot_token.startswith("xoxb-") and "not-real" in other.bot_token
    assert len({BOT_USER_ID, other.bot_user_id}) == 2 and len({BOT_ID, other.bot_id}) == 2


def test_each_call_and_each_message_knows_whose_token_carried_it(slack):
    other = slack.add_team()
    client(slack, BOT_TOKEN).chat_postMessage(channel="C1", text="for the default team")
    client(slack, other.bot_token).chat_postMessage(channel="C1", text="for the other team")
    assert [c.team for c in slack.calls_to("chat.postMessage")] == [TEAM_ID, other.id]
    assert [c.token for c in slack.calls_to("chat.postMessage", team=other)] == [other.bot_token]
    assert [m["text"] for m in slack.posts(team=other)] == ["for the other team"]
    assert [m["text"] for m in slack.posts("C1")] == ["for the default team", "for the other team"]
    ts = slack.posts(team=other)[0].ts
    assert refusal(lambda: client(slack, BOT_TOKEN).chat_update(channel="C1", ts=ts, text="x")) == "message_not_found"


def test_a_token_slack_never_issued_is_invalid_auth_and_a_violation(slack):
    assert refusal(lambda: client(slack, "xoxb-made-up-not-real").auth_test()) == "invalid_auth"
    assert refusal(lambda: client(slack, None).auth_test()) == "not_authed"
    assert slack.violations == ["auth.test: invalid_auth for a token of kind 'xoxb-'", "auth.test: no token"]
    slack.violations.clear()  # the fixture would fail on them: they are what this test provokes


def test_a_revoked_token_is_refused_for_good_and_is_not_a_violation(slack):
    other = slack.add_team()
    slack.revoke(other)
    assert refusal(lambda: client(slack, other.bot_token).chat_postMessage(channel="C1", text="hi")) == "token_revoked"
    assert client(slack, BOT_TOKEN).auth_test()["ok"]  # the other teams go on
    assert slack.violations == [] and [(r.method, r.error) for r in slack.refusals] == [
        ("chat.postMessage", "token_revoked")]


def test_the_app_level_token_opens_socket_mode_only_and_a_bot_token_cannot(slack):
    assert client(slack, None).apps_connections_open(app_token=APP_TOKEN)["url"].startswith("ws://")
    assert refusal(lambda: client(slack, APP_TOKEN).auth_test()) == "not_allowed_token_type"
    assert refusal(lambda: client(slack, None).apps_connections_open(app_token=BOT_TOKEN)) == "not_allowed_token_type"
    assert len(slack.violations) == 2
    slack.violations.clear()


def test_a_fake_made_without_a_token_takes_any_token_as_the_default_teams_but_not_a_revoked_one():
    fake = FakeSlack().start()
    try:
        assert client(fake, "xoxb-anything").auth_test()["team_id"] == TEAM_ID
        other = fake.add_team()
        assert client(fake, other.bot_token).auth_test()["team_id"] == other.id
        fake.revoke(other)
        assert refusal(lambda: client(fake, other.bot_token).auth_test()) == "token_revoked"
        fake.revoke()
        assert refusal(lambda: client(fake, "xoxb-anything").auth_test()) == "token_revoked"
    finally:
        fake.stop()


def test_users_info_gives_slacks_user_object_with_the_roles_of_the_persons_team(slack):
    other = slack.add_team()
    slack.make_admin("UADMIN01")
    slack.make_owner("UOWNER01", other, primary=True)
    slack.person("UGUEST01", is_restricted=True, tz="Europe/Berlin")
    admin = client(slack, BOT_TOKEN).users_info(user="UADMIN01")["user"]
    assert (admin["team_id"], admin["is_admin"], admin["is_owner"], admin["is_primary_owner"]) == (
        TEAM_ID, True, False, False)
    assert {"id", "name", "profile", "is_bot", "updated", "is_app_user", "tz", "tz_offset", "deleted"} <= set(admin)
    owner = client(slack, other.bot_token).users_info(user="UOWNER01")["user"]
    assert (owner["team_id"], owner["is_admin"], owner["is_owner"], owner["is_primary_owner"]) == (
        other.id, True, True, True)
    guest = client(slack, BOT_TOKEN).users_info(user="UGUEST01")["user"]
    assert guest["is_restricted"] and guest["tz"] == "Europe/Berlin" and guest["tz_offset"] in (3600, 7200)
    anyone = client(slack, BOT_TOKEN).users_info(user="UANYONE1")["user"]  # unplaced people exist everywhere
    assert (anyone["is_admin"], anyone["is_owner"], anyone["deleted"]) == (False, False, False)
    assert refusal(lambda: client(slack, BOT_TOKEN).users_info(user="UOWNER01")) == "user_not_found"


def test_a_deactivated_person_has_no_roles_and_the_bot_user_is_a_bot(slack):
    slack.person("UGONE001", deleted=True, is_admin=True)
    gone = client(slack, BOT_TOKEN).users_info(user="UGONE001")["user"]
    assert gone["deleted"] is True and "is_admin" not in gone and "tz" not in gone
    me = client(slack, BOT_TOKEN).users_info(user=BOT_USER_ID)["user"]
    assert me["is_bot"] is True and me["profile"]["bot_id"] == BOT_ID
    assert refusal(lambda: client(slack, BOT_TOKEN).api_call("users.info", params={})) == "invalid_arguments"
    assert slack.violations == ["users.info: missing ['user']"]
    slack.violations.clear()


def test_files_download_only_with_a_live_bot_token_of_their_own_team(slack):
    other = slack.add_team()
    file = slack.share_file("a.txt", b"hello", "text/plain", team=other)
    assert f"/files-pri/{other.id}-" in file["url_private"] and file["user_team"] == other.id

    def download(token):
        request = urllib.request.Request(file["url_private_download"], headers={"Authorization": f"Bearer {token}"})
        with urllib.request.urlopen(request, timeout=5) as response:
            return response.read()

    assert download(other.bot_token) == b"hello"
    assert b"Sign in" in download(BOT_TOKEN)
    assert client(slack, other.bot_token).files_info(file=file["id"])["file"]["id"] == file["id"]
    assert refusal(lambda: client(slack, BOT_TOKEN).files_info(file=file["id"])) == "file_not_found"
    slack.revoke(other)
    assert b"Sign in" in download(other.bot_token)
