"""Installing into several workspaces (OAuth mode: no SLACK_BOT_TOKEN, the app's client id and secret),
through the real install flow of the running app and the fake Slack's authorize page and oauth.v2.access;
events signed as Slack signs them, for each team."""
from datetime import timedelta
from urllib.parse import parse_qs, urlencode, urlparse

import pytest
import yaml
from sqlalchemy import text

from bot.domain.model import Channel
from bot.domain.settings import ChannelSettings

from ..fakes.anthropic_api import request_texts
from ..fakes.slack_browser import AUTHORIZE, _authorize_url, _cookies, get
from ..fakes.slack_browser import install
from ..harness import API_KEY, CHANNEL, CLIENT_ID, CLIENT_SECRET, SIGNING_SECRET, RunningBot, wait_until
from ..processes import BotProcess, clean_env, free_port
from ..unit.test_manifest import ROOT

MANY = dict(slack_bot_token=None, slack_client_id=CLIENT_ID, slack_client_secret=CLIENT_SECRET)


@pytest.fixture
def installable(slack, claude, migrated_sqlite_url):
    running = RunningBot(slack, claude, migrated_sqlite_url, **MANY)
    yield running
    running.stop()


def installations(bot, team_id: str) -> int:
    """Rows of slack-sdk's installation and bot tables for the team, read straight from the database."""
    with bot.db.engine.connect() as conn:
        return sum(conn.execute(text(f"SELECT COUNT(*) FROM {table} WHERE team_id = :team"), {"team": team_id})
                   .scalar() for table in ("slack_installations", "slack_bots"))


def departed(bot, team_id: str) -> bool:
    """The team's installation is gone and its departure recorded (the listeners run after the ack)."""
    return installations(bot, team_id) == 0 and bot.store.departures.departed_before(bot.clock()) == [team_id]


def kept_bodies(bot) -> list[str | None]:
    with bot.db.engine.connect() as conn:
        return list(conn.execute(text("SELECT payload FROM inbox")).scalars())


def undone_deliveries(bot) -> list[str]:
    with bot.db.engine.connect() as conn:
        return list(conn.execute(text("SELECT key FROM inbox WHERE done_at IS NULL")).scalars())


def stored_turns(bot) -> int:
    with bot.db.engine.connect() as conn:
        return conn.execute(text("SELECT COUNT(*) FROM turns")).scalar()


def answered(bot, slack, team, count: int = 1) -> None:
    wait_until(lambda: len(slack.posts(CHANNEL, team=team)) >= count, message=f"{count} answers in {team.id}")
    bot.settled()


def test_two_workspaces_using_the_same_channel_id_never_mix_and_each_is_answered_with_its_own_token(
        installable, slack, claude):
    first, second = installable.install(user="UINSTALL1"), installable.install(user="UINSTALL2")
    assert first.reply.status == second.reply.status == 200 and first.team.id != second.team.id
    installable.say("UALICE01", "apples are red", mention=True, team=first.team)
    answered(installable, slack, first.team)
    installable.say("UBOB0001", "bananas are yellow", mention=True, team=second.team)
    answered(installable, slack, second.team)
    installable.say("UALICE01", "and cherries?", mention=True, team=first.team)
    answered(installable, slack, first.team, 2)

    texts = [" ".join(request_texts(r)) for r in claude.requests]
    assert len(texts) == 3
    assert "apples" in texts[0] and "bananas" not in texts[0]
    assert "bananas" in texts[1] and "apples" not in texts[1] and "cherries" not in texts[1]
    assert "apples" in texts[2] and "cherries" in texts[2] and "bananas" not in texts[2]
    assert [p.shown for p in slack.posts(CHANNEL, team=first.team)] == ["Answer 1", "Answer 3"]
    assert [p.shown for p in slack.posts(CHANNEL, team=second.team)] == ["Answer 2"]
    made = [c for c in slack.calls if c.method != "oauth.v2.access"]
    assert made and {c.token for c in made} == {first.team.bot_token, second.team.bot_token}
    sessions = installable.store.sessions
    assert sessions.parent_id(Channel(first.team.id, CHANNEL)) != sessions.parent_id(Channel(second.team.id, CHANNEL))


def test_a_fork_its_file_and_its_merge_in_an_installed_workspace_all_use_that_workspaces_token(
        installable, slack, claude):
    installable.install()  # another workspace, installed first
    team = installable.install().team
    calls = len(slack.calls)
    assert installable.slash("/fork", "the outage", team=team).status == 200
    fork = wait_until(lambda: installable.store.sessions.fork_by_number(Channel(team.id, CHANNEL), 1))
    root = wait_until(lambda: installable.store.sessions.fork(fork.id).root_ts, message="the fork root")
    answered(installable, slack, team, 2)  # the root, and the topic answered in the thread
    log = slack.share_file("server.log", b"12:01 ERROR disk full\n", "text/plain", "text", team=team)
    installable.say("UBOB0001", "here is the log", thread_ts=root, files=[log], team=team)
    wait_until(lambda: len(claude.requests) == 2, message="the file read")
    installable.react("UCAROL01", root, team=team)
    wait_until(lambda: any("merged fork" in p.get("text", "") for p in slack.posts(CHANNEL, team=team)),
               message="the summary")
    installable.settled()
    assert "12:01 ERROR disk full" in " ".join(request_texts(claude.requests[1]))
    assert [d.token for d in slack.downloads_of(log["id"])] == [team.bot_token]
    assert {c.token for c in slack.calls[calls:] if c.method != "oauth.v2.access"} == {team.bot_token}


def test_a_workspace_of_an_enterprise_grid_is_installed_and_answered_like_any_other(installable, slack, claude):
    done = installable.install(enterprise_id="E0ORG0001")
    assert done.reply.status == 200 and done.team.enterprise_id == "E0ORG0001"
    installable.say("UALICE01", "hello from the grid", mention=True, team=done.team)
    answered(installable, slack, done.team)
    assert slack.calls_to("chat.postMessage")[-1].token == done.team.bot_token


def test_an_event_from_a_workspace_with_no_installation_changes_nothing(installable, slack, claude):
    installable.install()
    calls = len(slack.calls)
    installable.say("UALICE01", "is anyone there?", mention=True)  # the fake's default team: never installed
    installable.say("UALICE01", "in a DM", channel="D0DM00001", channel_type="im")
    installable.settled()
    assert claude.requests == [] and stored_turns(installable) == 0 and slack.posts() == []
    assert [c.method for c in slack.calls[calls:] if c.method != "auth.test"] == []


def test_the_install_page_links_to_slacks_authorize_url_with_the_manifests_scopes_and_a_checked_state(
        installable, slack):
    done = installable.install()
    scopes = yaml.safe_load((ROOT / "manifest.yml").read_text())["oauth_config"]["scopes"]["bot"]
    query = parse_qs(urlparse(done.authorize_url).query)
    assert done.authorize_url.startswith(AUTHORIZE + "?") and query["client_id"] == [CLIENT_ID]
    assert done.requested_scopes == tuple(scopes) and "user_scope" not in {k for k, v in query.items() if v != [""]}
    assert done.state and done.cookies["slack-app-oauth-state"] == done.state
    assert done.reply.status == 200 and installations(installable, done.team.id) == 2
    [exchange] = slack.calls_to("oauth.v2.access")
    assert exchange.get("code") == done.code


def test_a_callback_with_a_bad_or_missing_state_is_refused_and_stores_nothing(installable, slack):
    page = get(installable.url, "/slack/install")
    cookies = _cookies(page)
    state = parse_qs(urlparse(_authorize_url(page)).query)["state"][0]
    grant = slack.issue_code(scopes=("chat:write",))
    for query, jar in (({"code": grant.code, "state": "made-up"}, {"slack-app-oauth-state": "made-up"}),
                       ({"code": grant.code}, cookies),
                       ({"code": grant.code, "state": state}, {})):  # the state without Bolt's cookie
        reply = get(installable.url, f"/slack/oauth_redirect?{urlencode(query)}", jar)
        assert reply.status >= 400, (query, reply.status, reply.body[:200])
    assert slack.calls_to("oauth.v2.access") == [] and installations(installable, grant.team.id) == 0


def test_an_uninstall_removes_the_installation_records_the_departure_and_a_reinstall_clears_it(
        installable, slack, claude):
    done = installable.install()
    team, first_token = done.team, done.team.bot_token
    installable.say("UALICE01", "hello", mention=True, team=team)
    answered(installable, slack, team)
    assert installable.uninstall(team).status == 200  # tokens_revoked, then app_uninstalled
    wait_until(lambda: departed(installable, team.id), message="the departure")
    wait_until(lambda: undone_deliveries(installable) == [], message="both deliveries done")
    # the mention (as message and app_mention), tokens_revoked, app_uninstalled: kept, done, keys only
    assert kept_bodies(installable) == [None] * 4
    departures = installable.store.departures
    installable.say("UALICE01", "still there?", mention=True, team=team)
    installable.settled()
    assert len(claude.requests) == 1  # a workspace that left is not answered

    again = installable.install(team.id)
    assert again.reply.status == 200 and team.bot_token != first_token  # Slack never revives a revoked token
    assert departures.departed_before(installable.clock() + timedelta(days=365)) == []
    installable.say("UALICE01", "back again", mention=True, team=team)
    answered(installable, slack, team, 2)
    assert slack.posts(CHANNEL, team=team)[-1].shown == "Answer 2"
    assert slack.calls_to("chat.postMessage")[-1].token == team.bot_token  # the new one


def test_after_an_uninstall_the_sweep_deletes_the_workspaces_conversations_once_the_retention_has_passed(
        installable, slack, claude):
    leaving, staying = installable.install(), installable.install()
    for done in (leaving, staying):
        installable.say("UALICE01", f"hello from {done.team.id}", mention=True, team=done.team)
        answered(installable, slack, done.team)
    leaving_channel = Channel(leaving.team.id, CHANNEL)
    installable.store.channel_settings.save(leaving_channel, ChannelSettings(instructions="ours"), "UADMIN01")
    installable.uninstall(leaving.team)
    wait_until(lambda: departed(installable, leaving.team.id), message="the departure")
    installable.services.sweep()
    assert stored_turns(installable) == 4  # within THREADFORK_RETENTION_AFTER_UNINSTALL (30 days): kept
    installable.clock.advance(days=31)
    installable.services.sweep()
    with installable.db.engine.connect() as conn:
        teams = set(conn.execute(text("SELECT DISTINCT team_id FROM sessions")).scalars())
    assert teams == {staying.team.id} and stored_turns(installable) == 2
    assert installable.store.channel_settings.of(leaving_channel).instructions is None
    assert installable.store.departures.departed_before(installable.clock()) == []  # settled: not again


def test_the_bots_token_revoked_alone_is_an_uninstall(installable, slack):
    done = installable.install()
    assert installable.tokens_revoked(done.team).status == 200
    wait_until(lambda: departed(installable, done.team.id), message="the departure")


def test_a_revoked_user_token_alone_leaves_the_workspace_installed(installable, slack):
    done = installable.install()
    assert installable.tokens_revoked(done.team, bot=[], oauth=["UINSTALL1"]).status == 200
    wait_until(lambda: installations(installable, done.team.id) == 1, message="the installer's row gone")
    installable.settled()
    assert installable.store.departures.departed_before(installable.clock()) == []
    assert installations(installable, done.team.id) == 1  # the bot's stays: the workspace is still installed


def test_installing_works_on_sqlite_and_postgresql(slack, claude, migrated_url):
    running = RunningBot(slack, claude, migrated_url, **MANY)
    try:
        done = running.install()
        assert done.reply.status == 200 and installations(running, done.team.id) == 2
        running.say("UALICE01", "hi", mention=True, team=done.team)
        answered(running, slack, done.team)
        assert slack.calls_to("chat.postMessage", team=done.team)
    finally:
        running.stop()


def test_with_a_bot_token_client_credentials_in_the_environment_change_nothing(slack, claude, migrated_sqlite_url,
                                                                               monkeypatch):
    # Bolt would switch its own OAuth flow on from these two and ignore the token
    monkeypatch.setenv("SLACK_CLIENT_ID", CLIENT_ID)
    monkeypatch.setenv("SLACK_CLIENT_SECRET", CLIENT_SECRET)
    running = RunningBot(slack, claude, migrated_sqlite_url)
    try:
        running.say("UALICE01", "hi", mention=True)
        wait_until(lambda: slack.posts(CHANNEL), message="an answer")
        running.settled()
        assert len(claude.requests) == 1 and running.get("/slack/install").status == 404
    finally:
        running.stop()


@pytest.mark.settings(threadfork_retention_after_uninstall="0")
def test_with_a_bot_token_an_uninstall_is_recorded_and_the_sweep_deletes_the_conversations(bot, slack, claude):
    bot.say("UALICE01", "hello", mention=True)
    wait_until(lambda: claude.requests)
    bot.settled()
    bot.store.channel_settings.save(Channel("T0TEAM001", CHANNEL), ChannelSettings(instructions="x"), "U1")
    assert bot.uninstall().status == 200
    wait_until(lambda: undone_deliveries(bot) == [], message="the deliveries done")
    wait_until(lambda: bot.store.departures.departed_before(bot.clock() + timedelta(seconds=1)) == ["T0TEAM001"])
    bot.services.sweep()
    assert stored_turns(bot) == 0
    assert bot.store.channel_settings.of(Channel("T0TEAM001", CHANNEL)) == ChannelSettings()


def test_the_install_redirect_url_is_sent_to_slack_and_served_at_its_path(slack, claude, migrated_sqlite_url):
    url = "https://threadfork.example/installs/done"
    slack.oauth.redirect_urls = [url]  # the app's Redirect URLs, as Slack checks them
    running = RunningBot(slack, claude, migrated_sqlite_url, **MANY, threadfork_install_redirect_url=url)
    try:
        done = running.install()
        assert parse_qs(urlparse(done.authorize_url).query)["redirect_uri"] == [url]
        assert done.reply.status == 200 and installations(running, done.team.id) == 2
        assert running.get("/slack/oauth_redirect").status == 404
    finally:
        running.stop()


def test_python_m_bot_serves_the_install_under_gunicorn_and_never_logs_a_secret(tmp_path, slack, claude):
    env = clean_env(SLACK_CLIENT_ID=CLIENT_ID, SLACK_CLIENT_SECRET=CLIENT_SECRET, SLACK_SIGNING_SECRET=SIGNING_SECRET,
                    ANTHROPIC_API_KEY=API_KEY, SLACK_API_URL=slack.api_url, ANTHROPIC_BASE_URL=claude.url,
                    DATABASE_URL=f"sqlite:///{tmp_path / 'threadfork.db'}", PORT=free_port())
    process = BotProcess(tmp_path, env=env)
    try:
        process.wait_healthy()
        done = install(process.url, slack)
        assert done.reply.status == 200 and "Thank you" in done.reply.body
    finally:
        log = process.stop()
    assert "ready to be installed" in log and "Traceback" not in log
    for secret in (CLIENT_SECRET, SIGNING_SECRET, API_KEY, done.team.bot_token, done.code):
        assert secret not in log


def test_with_a_bot_token_a_start_with_a_new_working_token_is_the_workspaces_return(slack, claude, migrated_sqlite_url):
    first = RunningBot(slack, claude, migrated_sqlite_url)
    try:
        first.uninstall()
        wait_until(lambda: first.store.departures.departed_before(first.clock() + timedelta(seconds=1)) != [])
    finally:
        first.stop()
    team = slack.teams.reinstall(slack.team(None))  # the admin installs it again: a new bot token
    second = RunningBot(slack, claude, migrated_sqlite_url, slack_bot_token=team.bot_token)
    try:
        assert second.store.departures.departed_before(second.clock() + timedelta(days=365)) == []
    finally:
        second.stop()
