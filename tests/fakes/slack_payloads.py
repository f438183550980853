"""The payloads Slack sends an app, in Slack's shapes, for any team the fake serves.

Sources: docs.slack.dev/apis/events-api (the event_callback envelope and its `authorizations`),
/interactivity/implementing-slash-commands, /reference/interaction-payloads/block_actions-payload,
/reference/interaction-payloads/shortcuts-interaction-payload, /reference/interaction-payloads/
view-interactions-payload, /reference/events/app_uninstalled and /reference/events/tokens_revoked;
a shared or forwarded message as the legacy secondary attachment Slack adds to the sharer's message
(docs.slack.dev/messaging/formatting-message-text#attachments: `fallback`, `text`, `author_name`,
`author_link`, `author_icon`, `footer`, `ts`, `mrkdwn_in`; `author_subname` as slack-sdk's
MessageAttachment type has it, docs.slack.dev/tools/node-slack-sdk/reference/web-api/interfaces/
MessageAttachment), with the fields real share payloads add (`is_share`, `author_id`, `channel_id`,
`channel_team`, `from_url`, `message_blocks` with the shared message's rich_text, its `files`).
Invariants: every payload names its team (and enterprise, for an Enterprise Grid team) where Slack
puts it; the default team's payloads are exactly what the harness sent before teams existed, plus
the fields Slack adds (`context_team_id`, `enterprise`, `is_enterprise_install`).
"""
from __future__ import annotations

import time

from .slack_teams import APP_ID, Team

TOKEN = "legacy-verification-unused"  # the deprecated verification token every payload still carries


def envelope(event: dict, team: Team, event_id: str, person: str | None = None) -> dict:
    """The event_callback envelope of the Events API; its authorization is the bot's, or with `person` that
    person's (as app_context_changed's documented example has it: `is_bot: false`)."""
    wrapped = {
        "token": TOKEN, "team_id": team.id, "api_app_id": APP_ID, "event": event, "type": "event_callback",
        "event_id": event_id, "event_time": int(time.time()), "is_ext_shared_channel": False,
        "authorizations": [{"enterprise_id": team.enterprise_id, "team_id": team.id,
                            "user_id": person or team.bot_user_id, "is_bot": person is None,
                            "is_enterprise_install": team.is_enterprise_install}],
        "context_team_id": team.id, "context_enterprise_id": team.enterprise_id,
    }
    if team.enterprise_id:
        wrapped["enterprise_id"] = team.enterprise_id
    return wrapped


def team_object(team: Team) -> dict:
    found = {"id": team.id, "domain": team.domain}
    if team.enterprise_id:
        found.update(enterprise_id=team.enterprise_id, enterprise_name=team.enterprise_name)
    return found


def user_object(user: str, team: Team) -> dict:
    return {"id": user, "username": user.lower(), "name": user.lower(), "team_id": team.id}


def enterprise_fields(team: Team) -> dict:
    enterprise = {"id": team.enterprise_id, "name": team.enterprise_name} if team.enterprise_id else None
    return {"enterprise": enterprise, "is_enterprise_install": team.is_enterprise_install}


def slash_form(command: str, text: str, *, user: str, channel: str, team: Team, response_url: str,
               trigger_id: str) -> dict:
    form = {
        "token": TOKEN, "team_id": team.id, "team_domain": team.domain, "channel_id": channel,
        "channel_name": "general", "user_id": user, "user_name": user.lower(), "command": command, "text": text,
        "api_app_id": APP_ID, "is_enterprise_install": str(team.is_enterprise_install).lower(),
        "response_url": response_url, "trigger_id": trigger_id,
    }
    if team.enterprise_id:
        form.update(enterprise_id=team.enterprise_id, enterprise_name=team.enterprise_name)
    return form


def block_actions(action: dict, *, user: str, team: Team, trigger_id: str, container: dict, **where) -> dict:
    """A click: `where` holds channel, message and response_url (a message) or view (a modal)."""
    return {"type": "block_actions", "user": user_object(user, team), "api_app_id": APP_ID, "token": TOKEN,
            "container": container, "trigger_id": trigger_id, "team": team_object(team),
            **enterprise_fields(team), **where, "actions": [action]}


def message_action(callback_id: str, message: dict, *, user: str, channel: str, team: Team, trigger_id: str,
                   response_url: str) -> dict:
    """A message shortcut used on `message`."""
    return {"type": "message_action", "callback_id": callback_id, "trigger_id": trigger_id,
            "action_ts": f"{time.time():.6f}", "team": team_object(team), "user": user_object(user, team),
            "api_app_id": APP_ID, "channel": {"id": channel, "name": "general"}, "message_ts": message["ts"],
            "message": message, "response_url": response_url, "token": TOKEN, **enterprise_fields(team)}


def global_shortcut(callback_id: str, *, user: str, team: Team, trigger_id: str) -> dict:
    return {"type": "shortcut", "callback_id": callback_id, "trigger_id": trigger_id, "token": TOKEN,
            "action_ts": f"{time.time():.6f}", "team": team_object(team), "user": user_object(user, team),
            "api_app_id": APP_ID, **enterprise_fields(team)}


def view_submission(view: dict, *, user: str, team: Team, trigger_id: str) -> dict:
    return {"type": "view_submission", "team": team_object(team), "user": user_object(user, team),
            "api_app_id": APP_ID, "token": TOKEN, "trigger_id": trigger_id, "view": view, "response_urls": [],
            **enterprise_fields(team)}


def view_closed(view: dict, *, user: str, team: Team, is_cleared: bool = False) -> dict:
    return {"type": "view_closed", "team": team_object(team), "user": user_object(user, team),
            "api_app_id": APP_ID, "token": TOKEN, "view": view, "is_cleared": is_cleared, **enterprise_fields(team)}


def action_of(element: dict, block_id: str, value=None) -> dict:
    """The `actions` entry for a person using `element` (a button by default, with `value`)."""
    action = {"action_id": element["action_id"], "block_id": block_id, "type": element.get("type", "button"),
              "action_ts": f"{time.time():.6f}"}
    if action["type"] == "button":
        action["value"] = value if value is not None else element.get("value", "")
        action["text"] = element.get("text") or {"type": "plain_text", "text": element["action_id"]}
    elif action["type"] in ("static_select", "radio_buttons", "overflow"):
        action["selected_option"] = value
    elif action["type"] in ("multi_static_select", "checkboxes"):
        action["selected_options"] = value or []
    else:
        action["value"] = value
    return action


def app_uninstalled(event_ts: str) -> dict:
    return {"type": "app_uninstalled", "event_ts": event_ts}


def tokens_revoked(bot: list[str], oauth: list[str], event_ts: str) -> dict:
    return {"type": "tokens_revoked", "tokens": {"oauth": list(oauth), "bot": list(bot)}, "event_ts": event_ts}


def share_attachment(message: dict, *, team: Team, author_name: str, author_subname: str,
                     channel_name: str = "general") -> dict:
    """The attachment Slack adds to a message that shares (or forwards) `message`, a person's message event."""
    channel, ts, author = message["channel"], message["ts"], message["user"]
    link = f"https://{team.domain}.slack.com/archives/{channel}/p{ts.replace('.', '')}"
    words = message.get("text") or ""
    attachment = {
        "id": 1, "ts": ts, "author_id": author, "channel_id": channel, "channel_team": team.id,
        "is_share": True, "is_msg_unfurl": False,
        "message_blocks": [{"team": team.id, "channel": channel, "ts": ts, "message": {"blocks": [
            {"type": "rich_text", "block_id": "shr1", "elements": [
                {"type": "rich_text_section", "elements": [{"type": "text", "text": words}] if words else []}]}]}}],
        "color": "D0D0D0", "fallback": f"[{time.strftime('%B %d, %Y', time.gmtime(float(ts)))}] {author_subname}: {words}",
        "text": words, "author_name": author_name, "author_link": f"https://{team.domain}.slack.com/team/{author}",
        "author_icon": "https://avatars.slack-edge.com/fake_48.png", "author_subname": author_subname,
        "mrkdwn_in": ["text"], "footer": f"Posted in #{channel_name}", "from_url": link, "original_url": link,
    }
    if message.get("files"):
        attachment["files"] = message["files"]
    return attachment


def channel_entity(channel: str, team: Team) -> dict:
    """What a person views, as Slack names it in a context's `entities`."""
    return {"type": "slack#/types/channel_id", "value": channel, "team_id": team.id}


def app_context_changed(entities: list[dict], event_ts: str) -> dict:
    """docs.slack.dev/reference/events/app_context_changed: what the person views while the app is visible,
    most relevant entity first (`context: {}` when nothing is). The event names no `user` or `channel`: the
    person is the envelope's authorization (`envelope(…, person=…)`), as the page's example shows."""
    return {"type": "app_context_changed", "context": {"entities": entities} if entities else {},
            "event_ts": event_ts}


def agent_session_stopped(channel: str, thread_ts: str, user: str, streaming: list[str], event_ts: str) -> dict:
    """docs.slack.dev/reference/events/agent_session_stopped: a person pressed Stop on a session."""
    return {"type": "agent_session_stopped", "channel": channel, "thread_ts": thread_ts, "user": user,
            "streaming_message_ts": list(streaming), "event_ts": event_ts}


def app_home_opened(user: str, dm: str, tab: str, event_ts: str) -> dict:
    """docs.slack.dev/reference/events/app_home_opened; with `tab: messages` the person opened the app's DM
    (the Agent messaging experience's cue, replacing assistant_thread_started)."""
    return {"type": "app_home_opened", "user": user, "channel": dm, "tab": tab, "event_ts": event_ts}
