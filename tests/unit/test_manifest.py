"""manifest.yml validates against Slack's manifest schema and declares what Threadfork uses."""
import json
from pathlib import Path

import yaml
from jsonschema import Draft7Validator

ROOT = Path(__file__).resolve().parents[2]
SCHEMA = ROOT / "tests" / "fakes" / "slack_spec" / "manifest.schema.json"  # Slack's, verbatim


def manifest() -> dict:
    return yaml.safe_load((ROOT / "manifest.yml").read_text())


def test_the_manifest_validates_against_slacks_schema():
    errors = sorted(Draft7Validator(json.loads(SCHEMA.read_text())).iter_errors(manifest()), key=str)
    assert errors == []


def test_the_manifest_declares_socket_mode_commands_events_and_interactivity():
    m = manifest()
    assert m["settings"]["socket_mode_enabled"] is True
    assert m["settings"]["interactivity"]["is_enabled"] is True
    assert {"/fork", "/merge", "/forks", "/context", "/threadfork"} <= {c["command"] for c in m["features"]["slash_commands"]}
    assert m["features"]["app_home"]["home_tab_enabled"] is True
    assert {"app_home_opened", "app_mention", "file_deleted", "message.channels", "message.groups", "message.im",
            "message.mpim", "reaction_added", "app_uninstalled", "tokens_revoked"} <= set(
        m["settings"]["event_subscriptions"]["bot_events"])


def test_the_manifest_asks_only_for_the_scopes_threadfork_uses():
    assert set(manifest()["oauth_config"]["scopes"]["bot"]) == {
        "app_mentions:read", "channels:history", "groups:history", "im:history", "mpim:history",
        "chat:write", "commands", "files:read", "reactions:read", "reactions:write", "users:read"}


def test_the_manifest_declares_the_message_shortcuts_the_bot_listens_for():
    from bot.slack.render import FORK_FROM_HERE, MERGE_THIS_FORK

    shortcuts = {s["callback_id"]: s for s in manifest()["features"]["shortcuts"]}
    assert set(shortcuts) == {FORK_FROM_HERE, MERGE_THIS_FORK}
    assert all(s["type"] == "message" for s in shortcuts.values())


def test_the_install_asks_for_exactly_the_manifests_bot_scopes():
    from bot.slack.installs import BOT_SCOPES

    assert list(BOT_SCOPES) == manifest()["oauth_config"]["scopes"]["bot"]


def test_the_manifest_names_the_install_redirect_url_bolt_serves():
    from bot.slack.installs import REDIRECT_PATH

    assert [url.endswith(REDIRECT_PATH) for url in manifest()["oauth_config"]["redirect_urls"]] == [True]
