"""The fake Slack installs the app as Slack's OAuth v2 does: oauth.v2.access trades a one-time code for
the team's bot token (client credentials by HTTP Basic or form fields, the redirect URI checked), and
the harness's browser drives Bolt's own install flow from the install page to the stored installation."""
import threading
from wsgiref.simple_server import WSGIRequestHandler, make_server

import pytest
from slack_bolt import App
from slack_bolt.adapter.wsgi import SlackRequestHandler
from slack_bolt.oauth.oauth_settings import OAuthSettings
from slack_sdk import WebClient
from slack_sdk.oauth.installation_store import FileInstallationStore
from slack_sdk.oauth.state_store import FileOAuthStateStore

from tests.fakes.slack_api import APP_ID, CLIENT_ID, CLIENT_SECRET, TEAM_ID
from tests.fakes.slack_browser import SlackRefusedAuthorize, install

from .fake_slack_helpers import refusal, strict_fake

SCOPES = ["app_mentions:read", "chat:write", "commands"]


@pytest.fixture
def slack():
    yield from strict_fake()


def exchange(fake, code, **extra):
    return WebClient(base_url=fake.api_url).oauth_v2_access(
        client_id=extra.pop("client_id", CLIENT_ID), client_secret=extra.pop("client_secret", CLIENT_SECRET),
        code=code, **extra)


def test_a_code_buys_the_teams_bot_token_once_in_slacks_shape_and_the_token_then_works(slack):
    grant = slack.issue_code(scopes=SCOPES, user="UINSTALL1")
    answer = exchange(slack, grant.code).data
    team = grant.team
    assert answer == {"ok": True, "access_token": team.bot_token, "token_type": "bot", "scope": ",".join(SCOPES),
                      "bot_user_id": team.bot_user_id, "app_id": APP_ID, "team": {"id": team.id, "name": team.name},
                      "enterprise": None, "authed_user": {"id": "UINSTALL1"}, "is_enterprise_install": False}
    assert team.id != TEAM_ID
    who = WebClient(token=answer["access_token"], base_url=slack.api_url).auth_test()
    assert (who["team_id"], who["bot_id"], who.headers["x-oauth-scopes"]) == (team.id, team.bot_id, ",".join(SCOPES))
    assert refusal(lambda: exchange(slack, grant.code)) == "invalid_code"
    assert refusal(lambda: exchange(slack, "4724469134.made.up")) == "invalid_code"


def test_client_credentials_travel_as_form_fields_too_and_are_checked_id_first(slack):
    code = slack.issue_code(scopes=SCOPES).code
    api = WebClient(base_url=slack.api_url)
    assert refusal(lambda: api.api_call("oauth.v2.access", data={
        "client_id": "1.2", "client_secret": "nope", "code": code})) == "invalid_client_id"
    assert refusal(lambda: api.api_call("oauth.v2.access", data={
        "client_id": CLIENT_ID, "client_secret": "nope", "code": code})) == "bad_client_secret"
    answer = api.api_call("oauth.v2.access", data={"client_id": CLIENT_ID, "client_secret": CLIENT_SECRET, "code": code})
    assert answer["ok"] and answer["access_token"].startswith("xoxb-")


def test_a_code_issued_to_a_redirect_uri_needs_that_uri(slack):
    uri = "https://threadfork.example/slack/oauth_redirect"
    for given in ("https://elsewhere.example/slack/oauth_redirect", None):
        code = slack.issue_code(scopes=SCOPES, redirect_uri=uri).code
        assert refusal(lambda: exchange(slack, code, **({"redirect_uri": given} if given else {}))) == "bad_redirect_uri"
    assert exchange(slack, slack.issue_code(scopes=SCOPES, redirect_uri=uri).code, redirect_uri=uri)["ok"]


def test_reinstalling_keeps_a_live_token_and_replaces_a_revoked_one(slack):
    first = exchange(slack, slack.issue_code(scopes=SCOPES).code)
    team_id = first["team"]["id"]
    again = exchange(slack, slack.issue_code(team_id, scopes=SCOPES + ["users:read"]).code)
    assert again["access_token"] == first["access_token"] and again["scope"].endswith("users:read")
    slack.revoke(team_id)
    renewed = exchange(slack, slack.issue_code(team_id, scopes=SCOPES).code)
    assert renewed["access_token"] != first["access_token"] and renewed["team"]["id"] == team_id
    assert WebClient(token=renewed["access_token"], base_url=slack.api_url).auth_test()["team_id"] == team_id
    assert refusal(lambda: WebClient(token=first["access_token"], base_url=slack.api_url).auth_test()) == "token_revoked"


def test_an_organization_wide_install_has_no_team_and_names_the_enterprise(slack):
    grant = slack.issue_code(scopes=SCOPES, enterprise_id="E0ORG0001", is_enterprise_install=True)
    answer = exchange(slack, grant.code)
    assert (answer["team"], answer["enterprise"], answer["is_enterprise_install"]) == (
        None, {"id": "E0ORG0001", "name": "Org E0ORG0001"}, True)
    who = WebClient(token=answer["access_token"], base_url=slack.api_url).auth_test()
    assert who["enterprise_id"] == "E0ORG0001" and who["is_enterprise_install"] is True


# the browser side, against Bolt's standard OAuth flow ------------------------------------

class _Quiet(WSGIRequestHandler):
    def log_message(self, *args):
        pass


@pytest.fixture
def bolt_app(slack, tmp_path):
    """A Bolt app with Bolt's own OAuth flow, as the app's HTTP mode serves it; (url, installation store)."""
    def serve(**settings):
        store = FileInstallationStore(base_dir=str(tmp_path / "installations"))
        app = App(signing_secret="test-signing-secret-not-real", client=WebClient(base_url=slack.api_url),
                  oauth_settings=OAuthSettings(client_id=CLIENT_ID, client_secret=CLIENT_SECRET, scopes=SCOPES,
                                               installation_store=store,
                                               state_store=FileOAuthStateStore(expiration_seconds=600,
                                                                               base_dir=str(tmp_path / "states")),
                                               **settings))
        handler = SlackRequestHandler(app)
        server = make_server("127.0.0.1", 0, handler, handler_class=_Quiet)
        threading.Thread(target=server.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True).start()
        servers.append(server)
        return f"http://127.0.0.1:{server.server_port}", store

    servers = []
    yield serve
    for server in servers:
        server.shutdown()
        server.server_close()


def test_the_browser_installs_through_bolts_install_page_and_the_app_stores_the_new_teams_token(slack, bolt_app):
    url, store = bolt_app()
    done = install(url, slack, user="UINSTALL1")
    assert done.install_page.status == 200 and "slack-app-oauth-state" in done.cookies
    assert done.requested_scopes == tuple(SCOPES) and done.state == done.cookies["slack-app-oauth-state"]
    assert done.reply.status == 200 and "Thank you!" in done.reply.body, done.reply.body
    stored = store.find_installation(enterprise_id=None, team_id=done.team.id)
    assert (stored.bot_token, stored.bot_user_id, stored.bot_id, stored.user_id) == (
        done.team.bot_token, done.team.bot_user_id, done.team.bot_id, "UINSTALL1")
    assert [c.team for c in slack.calls_to("auth.test")] == [done.team.id]  # Bolt asks who the new token is


def test_the_browser_follows_a_redirect_to_slack_and_slack_sends_it_back_to_the_redirect_uri(slack, bolt_app):
    url, store = bolt_app(install_page_rendering_enabled=False,
                          redirect_uri="https://threadfork.example/slack/oauth_redirect")
    done = install(url, slack, "T0NEWTEAM", user="UINSTALL2")
    assert done.install_page.status == 302 and done.reply.status == 200, done.reply.body
    assert done.team.id == "T0NEWTEAM" and store.find_installation(enterprise_id=None, team_id="T0NEWTEAM")
    slack.oauth.redirect_urls = ["https://threadfork.example/other"]
    with pytest.raises(SlackRefusedAuthorize):
        install(url, slack)


def test_without_its_state_cookie_or_with_the_install_cancelled_bolt_installs_nothing(slack, bolt_app):
    url, store = bolt_app()
    lost = install(url, slack, cookies=False)
    assert lost.reply.status == 400 and "invalid_browser" in lost.reply.body
    assert store.find_installation(enterprise_id=None, team_id=lost.team.id) is None
    cancelled = install(url, slack, approve=False)
    assert cancelled.code is None and "access_denied" in cancelled.reply.body
    assert slack.calls_to("oauth.v2.access") == []
