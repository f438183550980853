"""What a test arranges in the fake Slack and reads back from it, beyond the calls: its teams and
people, installs, trigger ids and modals, the messages its channels hold, and files. Mixed into
FakeSlack, which provides `teams`, `oauth`, `views`, `history`, `chat`, `files`, `calls`, `_lock`.

`team` arguments take a Team or a team id; None is the default team."""
from __future__ import annotations

from .slack_files import FileDeletion, SlackFiles
from .slack_records import Call
from .slack_teams import TEAM_ID, Team


class SlackWorld:
    # teams, people, installs, modals, messages ------------------------------------------

    def team(self, team: str | Team | None = None) -> Team:
        """A team the fake serves (the default team when None)."""
        return self.teams.get(team)

    def add_team(self, team_id: str | None = None, **options) -> Team:
        """Another workspace with its own bot token, bot user and bot id (options: name, enterprise_id,
        enterprise_name, is_enterprise_install, scopes, installer)."""
        return self.teams.add(team_id, **options)

    def revoke(self, team: str | Team | None = None) -> Team:
        """Revoke the team's bot token (an uninstall does this): calls with it answer `token_revoked`."""
        return self.teams.revoke(team)

    def person(self, user: str, team: str | Team | None = None, **fields):
        """Place a person in a team with fields of slack_teams.Person (is_admin, deleted, tz, name…)."""
        return self.teams.person(user, team, **fields)

    def make_admin(self, user: str, team: str | Team | None = None):
        return self.teams.person(user, team, is_admin=True)

    def make_owner(self, user: str, team: str | Team | None = None, *, primary: bool = False):
        return self.teams.person(user, team, is_admin=True, is_owner=True, is_primary_owner=primary)

    def issue_code(self, team: str | Team | None = None, **options):
        """The code Slack's authorize page gives the browser when a person approves the install
        (slack_oauth.OAuth.issue_code: scopes, user, enterprise_id, is_enterprise_install, redirect_uri,
        team_name); a new team when `team` is None or unknown. Returns the Grant (.code, .team)."""
        return self.oauth.issue_code(team, **options)

    def issue_trigger(self, user: str, team: str | Team | None = None, view_id: str | None = None) -> str:
        """A trigger id for an interaction of `user` (in the modal `view_id`, if any)."""
        return self.views.issue_trigger(self.team(team).id, user, view_id)

    def expire_triggers(self) -> None:
        self.views.expire_triggers()

    def opened_views(self, callback_id: str | None = None, *, user: str | None = None,
                     open_only: bool = False) -> list:
        """Modals the bot opened (slack_views.OpenedView: .view, .values, .closed, .errors), in order."""
        found = self.views.all()
        return [v for v in found if (callback_id is None or v.view["callback_id"] == callback_id)
                and (user is None or v.user == user) and not (open_only and v.closed)]

    def view(self, view_id: str):
        return self.views.views[view_id]

    def home(self, user: str, team: str | Team | None = None):
        """The Home tab the bot last published for `user` (an OpenedView), or None."""
        return self.views.homes.get((self.team(team).id, user))

    def calls_under(self, prefix: str, team: str | Team | None = None) -> list[Call]:
        """The calls of every method starting with `prefix` (e.g. "conversations."), in order."""
        team_id = team.id if isinstance(team, Team) else team
        with self._lock:
            return [c for c in self.calls if c.method.startswith(prefix) and (team_id is None or c.team == team_id)]

    def record_message(self, message: dict, team: str | Team | None = None) -> None:
        """A message someone other than the bot posted (its message event), now in Slack's history."""
        self.history.record(self.team(team).id, message)

    def message(self, ts: str, channel: str, team: str | Team | None = None) -> dict | None:
        """A message of the channel (a person's, another app's or the bot's) as Slack shows it, or None."""
        return self.history.find(self.team(team).id, channel, ts)

    def add_channel(self, channel: str, team: str | Team | None = None) -> None:
        self.history.add_channel(self.team(team).id, channel)

    def add_room(self, channel: str, name: str, members, *, bot: bool = True, private: bool = False,
                 team: str | Team | None = None):
        """A channel whose members Slack knows (conversations.info / members): `members`, and the bot unless
        `bot` is False."""
        team = self.team(team)
        return self.channels.add(team.id, channel, name, [*members, *([team.bot_user_id] if bot else [])], private)

    def session(self, channel: str, thread_ts: str, team: str | Team | None = None):
        """The agent session of a thread (slack_agents.AgentSession: .status, .statuses, .title, .initiator)."""
        return self.agents.session(self.team(team).id, channel, thread_ts)

    def agent_feature_off(self, team: str | Team | None = None) -> None:
        """The app is no agent app in `team` (the feature is off there): its session and prompt calls are refused."""
        self.agents.feature_off.add(self.team(team).id)

    def suggested(self, team: str | Team | None = None) -> list:
        """Every setSuggestedPrompts the bot made, in order (slack_agents.Prompts)."""
        team_id = self.team(team).id
        return [p for p in list(self.agents.prompts) if p.team == team_id]

    def press_stop(self, channel: str, thread_ts: str, team: str | Team | None = None) -> list[str]:
        """A person presses the session's Stop (shown while it is processing): Slack stops the app's streaming
        messages there; their ts, for the event."""
        team = self.team(team)
        self.agents.pressed(team.id, channel, thread_ts)
        return self.chat.stopped_by_person(team.id, channel, thread_ts)

    def _bot_messages(self, team_id: str) -> list[dict]:
        return self.chat.of_team(self.teams.get(team_id))

    # files ------------------------------------------------------------------------------

    def _new_files(self) -> SlackFiles:
        return SlackFiles(TEAM_ID, lambda: self.server.url, self.accepts)

    def accepts(self, token: str, team: str = TEAM_ID) -> bool:
        """A file of `team` downloads with that team's live bot token (any `xoxb-` in "any token" mode)."""
        found = self.teams.bot_token_team(token)
        return found is not None and found.id == team

    def share_file(self, name: str, data: bytes, mimetype: str, filetype: str | None = None, **options) -> dict:
        """Register a file; the answer is its object as a message event's `files` array holds it.
        Options: user, title, refuse (403, 404 or "login"), team, connect ("visible" or "hidden": a Slack
        Connect file, given as its stub; files.info reveals it or answers file_not_found)."""
        if "team" in options:
            options["team"] = self.team(options["team"]).id
        return self.files.share(name, data, mimetype, filetype, **options)

    def refuse_download(self, file_id: str, how: int | str | None) -> None:
        self.files.refuse(file_id, how)

    def delete_file(self, file_id: str, message: dict | None = None) -> FileDeletion:
        return self.files.delete(file_id, message)

    @property
    def downloads(self) -> list:
        """Every GET of a file URL, in order: url, file_id, token, status, served, at (monotonic)."""
        return list(self.files.downloads)

    def downloads_of(self, file_id: str, *, served: bool | None = None) -> list:
        return [d for d in list(self.files.downloads)
                if d.file_id == file_id and (served is None or d.served == served)]
