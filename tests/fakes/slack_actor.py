"""Slack delivering what people (and other apps) do to the app, signed, in Slack's payload shapes,
for any team the fake serves (`team`: a Team or team id; the default team when None).

A class that mixes this in provides `slack` (the FakeSlack), `url` (the app) and
`post(body, content_type, headers=None) -> Reply`. Invariants:
- What a person posts exists in Slack before the app hears of it: `said` records the message in the
  fake's history of its team and channel (conversations.replies returns it; `slack.posts()` still
  lists only what the bot created).
- Every ts comes from the fake's one counter, so ts order is the order things happened.
- Every interaction (slash command, click, shortcut, submission) carries a trigger id the fake
  issued for that person and team, good for 3 seconds and one views.open.
- A submission is what Slack's client would send (view_state.NotSubmittable otherwise), and the app's
  HTTP answer is applied to the fake's modal as Slack applies it (slack_views.Views.submitted).
"""
from __future__ import annotations

import itertools
import json
import time
import urllib.parse

from . import slack_payloads as payloads
from .slack_browser import Installation, install
from .slack_views import OpenedView
from .view_rules import elements_of
from .view_state import VALUE_KEYS, NotSubmittable, submitted_state

CHANNEL = "C0GENERAL01"


class SlackActor:
    _ids = itertools.count(1)  # event ids unique across every app the tests drive

    # events -----------------------------------------------------------------------------

    def event(self, event: dict, event_id: str | None = None, headers: dict | None = None, *, team=None,
              person: str | None = None):
        """`person`: the envelope's authorization is theirs rather than the bot's (an app_context_changed)."""
        wrapped = payloads.envelope(event, self.slack.team(team), event_id or f"Ev{next(self._ids):08d}", person)
        return self.post(json.dumps(wrapped).encode(), "application/json", headers)

    def say(self, user: str, text: str, *, channel: str = CHANNEL, thread_ts: str | None = None,
            mention: bool = False, channel_type: str = "channel", files: list[dict] | None = None,
            attachments: list[dict] | None = None, team=None, viewing: str | None = None) -> str:
        """A person posts a message (with `files`, as `slack.share_file` describes them, and `attachments`,
        e.g. a `shared` message); with a mention Slack delivers it as `message` and `app_mention`. `viewing`:
        in the app's DM, the channel the person views (Slack attaches it as the message's `app_context`)."""
        return self.said(user, text, channel=channel, thread_ts=thread_ts, mention=mention,
                         channel_type=channel_type, files=files, attachments=attachments, team=team,
                         viewing=viewing)["ts"]

    def dm(self, user: str, text: str, *, dm: str, thread_ts: str | None = None, viewing: str | None = None,
           team=None) -> str:
        """A person writes in their DM with the app (a thread of it with `thread_ts`)."""
        return self.say(user, text, channel=dm, thread_ts=thread_ts, channel_type="im", viewing=viewing, team=team)

    def view_channel(self, user: str, channel: str | None, *, dm: str, team=None, event_ts: str | None = None):
        """The person, with the app's pane open (beside their DM with the app, `dm`, which the event does not
        name), now views `channel` (None: nothing Slack names); Slack names the person in the authorization.
        `event_ts`: when they did (now by default; an earlier one is a view Slack delivers late)."""
        team = self.slack.team(team)
        entities = [payloads.channel_entity(channel, team)] if channel else []
        return self.event(payloads.app_context_changed(entities, event_ts or self.new_ts()), team=team, person=user)

    def open_dm(self, user: str, *, dm: str, tab: str = "messages", team=None):
        """The person opens the app's DM (its Messages tab), or another tab."""
        return self.event(payloads.app_home_opened(user, dm, tab, self.new_ts()), team=team)

    def press_stop(self, user: str, thread_ts: str, *, channel: str = CHANNEL, team=None):
        """The person presses Stop on the agent session of a thread (Slack shows it while the session is
        processing): Slack stops the app's streams there, then tells the app."""
        team = self.slack.team(team)
        streaming = self.slack.press_stop(channel, thread_ts, team)
        return self.event(payloads.agent_session_stopped(channel, thread_ts, user, streaming, self.new_ts()),
                          team=team)

    def shared(self, message: dict, *, name: str | None = None, team=None) -> dict:
        """The attachment of a message that shares or forwards `message` (an event `said` returned),
        written by a person Slack shows as `name` (their real name; the user id lowercased by default)."""
        team = self.slack.team(team)
        subname = message["user"].lower()
        return payloads.share_attachment(message, team=team, author_name=name or subname, author_subname=subname)

    def slackbot_says(self, text: str, *, channel: str = "D0SLACKBOT1", team=None) -> str:
        """Slackbot writes to the bot in their DM (a reminder, a notice): a user message from USLACKBOT,
        without a bot_id."""
        return self.say("USLACKBOT", text, channel=channel, channel_type="im", team=team)

    def said(self, user: str, text: str, *, channel: str = CHANNEL, thread_ts: str | None = None,
             mention: bool = False, channel_type: str = "channel", files: list[dict] | None = None,
             attachments: list[dict] | None = None, team=None, viewing: str | None = None) -> dict:
        """`say`, returning the message event as Slack sent it."""
        team = self.slack.team(team)
        ts = self.new_ts()
        if mention:
            text = f"<@{team.bot_user_id}> {text}"
        message = {"type": "message", "channel": channel, "user": user, "text": text, "ts": ts,
                   "event_ts": ts, "channel_type": channel_type, "team": team.id}
        if files:
            message.update(subtype="file_share", files=files, upload=False)
        if attachments:
            message["attachments"] = attachments
        if thread_ts:
            message["thread_ts"] = thread_ts
        if viewing is not None:  # "": a context naming nothing (the person views no channel)
            message["app_context"] = {"entities": [payloads.channel_entity(viewing, team)] if viewing else []}
        self.slack.record_message(message, team)
        assert self.event(message, team=team).status == 200
        if mention:
            mention_event = {"type": "app_mention", "channel": channel, "user": user, "text": text, "ts": ts,
                             "event_ts": ts, "team": team.id, **({"thread_ts": thread_ts} if thread_ts else {}),
                             **({"files": files} if files else {}),
                             **({"attachments": attachments} if attachments else {})}
            assert self.event(mention_event, team=team).status == 200
        return message

    def other_app_says(self, text: str, *, bot_id: str = "BOTHER01", username: str = "another-app",
                       channel: str = CHANNEL, thread_ts: str | None = None, team=None) -> str:
        """An app without a bot user posts (subtype bot_message: bot_id, no user)."""
        team = self.slack.team(team)
        ts = self.new_ts()
        message = {"type": "message", "subtype": "bot_message", "bot_id": bot_id, "username": username,
                   "text": text, "ts": ts, "channel": channel, "event_ts": ts, "channel_type": "channel",
                   **({"thread_ts": thread_ts} if thread_ts else {})}
        self.slack.record_message(message, team)
        assert self.event(message, team=team).status == 200
        return ts

    def react(self, user: str, ts: str, reaction: str = "white_check_mark", channel: str = CHANNEL,
              event_id: str | None = None, *, team=None):
        team = self.slack.team(team)
        known = self.slack.message(ts, channel, team) or {}
        event = {"type": "reaction_added", "user": user, "reaction": reaction,
                 "item": {"type": "message", "channel": channel, "ts": ts},
                 "item_user": known.get("user") or team.bot_user_id, "event_ts": self.new_ts()}
        return self.event(event, event_id=event_id, team=team)

    def uninstall(self, team=None, *, tokens_revoked: bool = True):
        """The team uninstalls the app: its token is revoked, then Slack sends tokens_revoked (unless
        told not to) and app_uninstalled; the reply to the last."""
        team = self.slack.revoke(team)
        if tokens_revoked:
            self.tokens_revoked(team)
        return self.event(payloads.app_uninstalled(self.new_ts()), team=team)

    def tokens_revoked(self, team=None, *, bot: list[str] | None = None, oauth: list[str] = ()):
        """Slack tells the app tokens were revoked (by default the team's bot token, revoked first)."""
        team = self.slack.team(team)
        bot = [team.bot_user_id] if bot is None else list(bot)
        if team.bot_user_id in bot:
            self.slack.revoke(team)
        return self.event(payloads.tokens_revoked(bot, list(oauth), self.new_ts()), team=team)

    # interactivity ----------------------------------------------------------------------

    def slash(self, command: str, text: str = "", *, user: str = "UALICE01", channel: str = CHANNEL, team=None):
        team = self.slack.team(team)
        form = payloads.slash_form(
            command, text, user=user, channel=channel, team=team, trigger_id=self.slack.issue_trigger(user, team),
            response_url=self.slack.response_url(f"{command.strip('/')}-{next(self._ids)}"))
        return self.post(urllib.parse.urlencode(form).encode(), "application/x-www-form-urlencoded")

    def click(self, action_id: str, value=None, *, user: str = "UALICE01", channel: str = CHANNEL,
              message_ts: str = "1.0", team=None, view=None, block_id: str | None = None):
        """A person clicks (or picks, for a select: `value` is the option's value) an element of a message,
        or of an open modal when `view` (an OpenedView or its id) is given."""
        if view is not None:
            return self._click_in_view(action_id, value, self._opened(view), user)
        team = self.slack.team(team)
        message = self.slack.message(message_ts, channel, team)
        found = _element(message.get("blocks") or [], action_id) if message else None
        block, element = found or ({"block_id": block_id or "fork"}, {"action_id": action_id, "type": "button"})
        shown = message or {"type": "message", "ts": message_ts}
        payload = payloads.block_actions(
            payloads.action_of(element, block_id or block["block_id"], value), user=user, team=team,
            trigger_id=self.slack.issue_trigger(user, team),
            container={"type": "message", "message_ts": message_ts, "channel_id": channel, "is_ephemeral": False},
            channel={"id": channel, "name": "general"}, message=shown,
            response_url=self.slack.response_url(f"action-{next(self._ids)}"))
        return self._interact(payload)

    def shortcut(self, callback_id: str, message_ts: str, *, thread_ts: str | None = None, user: str = "UCAROL01",
                 channel: str = CHANNEL, team=None, author: str = "UALICE01", text: str = "x"):
        """A message shortcut used on the message at `message_ts` (as Slack has it; else a message of
        `author` saying `text`, in the thread `thread_ts` if given)."""
        team = self.slack.team(team)
        message = self.slack.message(message_ts, channel, team) or {
            "type": "message", "user": author, "ts": message_ts, "text": text,
            **({"thread_ts": thread_ts} if thread_ts else {})}
        payload = payloads.message_action(
            callback_id, message, user=user, channel=channel, team=team,
            trigger_id=self.slack.issue_trigger(user, team), response_url=self.slack.response_url("shortcut"))
        return self._interact(payload)

    def global_shortcut(self, callback_id: str, *, user: str = "UALICE01", team=None):
        team = self.slack.team(team)
        return self._interact(payloads.global_shortcut(callback_id, user=user, team=team,
                                                       trigger_id=self.slack.issue_trigger(user, team)))

    def submit_view(self, view, values: dict | None = None, *, user: str | None = None, team=None):
        """The person submits the modal `view` (an OpenedView or its id) with `values` ({block_id or
        action_id: value}; options by their value); the app's HTTP reply, which the fake applies."""
        opened = self._opened(view)
        if opened.closed or opened.stack[-1] != opened.id or not opened.view.get("submit"):
            raise NotSubmittable(f"view {opened.id} is not an open modal on top with a submit button")
        team = self.slack.team(team or opened.view["team_id"])
        user = user or opened.user
        state = submitted_state(opened.view["blocks"], opened.view["state"], values or {})
        payload = payloads.view_submission({**opened.view, "state": state}, user=user, team=team,
                                           trigger_id=self.slack.issue_trigger(user, team, opened.id))
        started = time.monotonic()
        reply = self._interact(payload)
        self.slack.views.submitted(opened.id, state, reply.status, reply.body, time.monotonic() - started)
        return reply

    def close_view(self, view, *, user: str | None = None, team=None, cleared: bool = False):
        """The person closes the modal (Back on a pushed view; with `cleared`, the X that closes the whole
        stack): view_closed goes to the app only if the view asked for it (notify_on_close); its reply, else None."""
        opened = self.slack.views.closed(self._opened(view).id, cleared)
        if not opened.view.get("notify_on_close"):
            return None
        team = self.slack.team(team or opened.view["team_id"])
        return self._interact(payloads.view_closed(opened.view, user=user or opened.user, team=team,
                                                   is_cleared=cleared))

    def install(self, team=None, **options) -> Installation:
        """Install the app in `team` (a new team when None) through the browser flow (slack_browser.install:
        user, scopes, enterprise_id, is_enterprise_install, install_path, approve, cookies)."""
        return install(self.url, self.slack, team, **options)

    # plumbing ---------------------------------------------------------------------------

    def new_ts(self) -> str:
        return self.slack.next_ts()

    def _interact(self, payload: dict):
        body = urllib.parse.urlencode({"payload": json.dumps(payload)}).encode()
        return self.post(body, "application/x-www-form-urlencoded")

    def _opened(self, view) -> OpenedView:
        return view if isinstance(view, OpenedView) else self.slack.view(view)

    def _click_in_view(self, action_id: str, value, opened: OpenedView, user: str):
        found = _element(opened.view["blocks"], action_id)
        if found is None or opened.closed:
            raise NotSubmittable(f"no element {action_id!r} in an open view {opened.id}")
        block, element = found
        if element.get("type") in VALUE_KEYS and value is not None:
            state = submitted_state([block], opened.view["state"], {element["action_id"]: value})
            opened.view["state"] = {"values": {**opened.view["state"]["values"], **state["values"]}}
            value = state["values"][block["block_id"]][element["action_id"]][VALUE_KEYS[element["type"]][0]]
        team = self.slack.team(opened.view["team_id"])
        payload = payloads.block_actions(
            payloads.action_of(element, block["block_id"], value), user=user, team=team,
            trigger_id=self.slack.issue_trigger(user, team, opened.id),
            container={"type": "view", "view_id": opened.id}, view=opened.view)
        return self._interact(payload)


def _element(blocks: list, action_id: str):
    for block in blocks:
        for element, _ in elements_of(block, ""):
            if element.get("action_id") == action_id:
                return block, element
    return None
