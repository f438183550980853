"""manifest.yml validates against Slack's manifest schema and declares what Threadfork uses."""
import json
import re
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
        "app_mentions:read", "assistant:write", "channels:history", "channels:read", "groups:history", "groups:read",
        "im:history", "mpim:history", "chat:write", "commands", "files:read", "reactions:read", "reactions:write",
        "users:read"}


# what in the bot's code needs each scope: a Web API method it calls, or an event it subscribes to
SCOPE_EVIDENCE = {
    "app_mentions:read": "event:app_mention", "assistant:write": "agents_sessions_setStatus",
    "channels:history": "event:message.channels", "channels:read": "conversations_info",
    "groups:history": "event:message.groups", "groups:read": "conversations_members",
    "im:history": "event:message.im", "mpim:history": "event:message.mpim", "chat:write": "chat_postMessage",
    "commands": "app.command(", "files:read": "files_info", "reactions:read": "event:reaction_added",
    "reactions:write": "reactions_add", "users:read": "users_info",
}


def bot_sources() -> str:
    return "\n".join(p.read_text() for p in (ROOT / "bot").rglob("*.py"))


def handled_events() -> set[str]:
    """The event types the listeners are registered for (`message` stands for its message.* subscriptions)."""
    return set(re.findall(r'\.event\("([a-z_]+)"\)', bot_sources()))


def test_every_event_the_manifest_subscribes_to_is_handled_and_every_handled_one_subscribed():
    subscribed = set(manifest()["settings"]["event_subscriptions"]["bot_events"])
    assert {"agent_session_stopped", "app_context_changed"} <= subscribed
    assert {e.split(".")[0] for e in subscribed} == handled_events()


def test_every_scope_the_manifest_asks_for_is_used_and_every_one_used_is_asked_for():
    sources = bot_sources()
    events = set(manifest()["settings"]["event_subscriptions"]["bot_events"])
    used = {scope for scope, evidence in SCOPE_EVIDENCE.items()
            if (evidence.removeprefix("event:") in events if evidence.startswith("event:") else evidence in sources)}
    assert set(manifest()["oauth_config"]["scopes"]["bot"]) == used == set(SCOPE_EVIDENCE)


def test_the_manifest_declares_the_agent_messaging_experience_not_the_assistant_one():
    features = manifest()["features"]
    assert "assistant_view" not in features
    assert features["agent_view"]["agent_description"].strip()
    assert 1 <= len(features["agent_view"].get("suggested_prompts", [])) <= 4


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
