"""The workspaces (teams) the fake Slack serves, their tokens, and the people in them.

Invariants:
- The default team is TEAM_ID, with bot user BOT_USER_ID, bot id BOT_ID and bot token BOT_TOKEN
  (or the token the fake was made with). More teams come from `add` (or an OAuth install), numbered
  from 2: T0TEAM002, UBOT0002, BBOT0002, `xoxb-t0team002-test-token-not-real`.
- A token belongs to exactly one team; `resolve` answers (team, error) the way Slack authenticates:
  a token Slack never issued is `invalid_auth`, a revoked one `token_revoked` (for good: Slack never
  revives a token; reinstalling issues a new one).
- "Any token" mode (`any_token=True`, the fake made without a bot token, as unit tests and the bench
  make it): a token the fake does not know stands for the default team, as every token did before
  teams existed. Revoked tokens are refused in both modes.
- The app-level token (`xapp-`) is good only for `apps.connections.open`, and a bot token is not
  (Slack: `not_allowed_token_type`).
- People exist in whichever team asks about them, unless `person` placed them in a team: then only
  there (`user_not_found` elsewhere). `users.info` answers Slack's user object, admin flags included
  (a deactivated person's object has no admin flags or time zone, as Slack's has none).
"""
from __future__ import annotations

import itertools
import threading
from dataclasses import dataclass, field, replace
from datetime import datetime, timezone
from zoneinfo import ZoneInfo

TEAM_ID = "T0TEAM001"
BOT_USER_ID = "UBOT0001"
BOT_ID = "BBOT0001"
BOT_TOKEN = "xoxb-test-token-not-real"
APP_TOKEN = "xapp-test-app-token-not-real"  # the app-level token Socket Mode connects with
APP_ID = "A0THREADFORK"
APP_LEVEL_METHODS = {"apps.connections.open"}
TZ_LABELS = {"America/Los_Angeles": "Pacific Standard Time", "America/New_York": "Eastern Standard Time",
             "Europe/London": "Greenwich Mean Time", "Europe/Berlin": "Central European Time",
             "Asia/Tokyo": "Japan Standard Time", "UTC": "Coordinated Universal Time"}


@dataclass
class Team:
    id: str
    name: str
    domain: str
    bot_token: str
    bot_user_id: str
    bot_id: str
    enterprise_id: str | None = None
    enterprise_name: str | None = None
    is_enterprise_install: bool = False
    scopes: tuple[str, ...] | None = None  # None: not known (the default team), every call allowed
    installer: str | None = None
    revoked: bool = False


@dataclass
class Person:
    id: str
    team: str
    name: str | None = None
    real_name: str | None = None
    is_admin: bool = False
    is_owner: bool = False
    is_primary_owner: bool = False
    is_restricted: bool = False
    is_ultra_restricted: bool = False
    is_bot: bool = False
    deleted: bool = False
    tz: str = "America/Los_Angeles"
    email: str | None = None


@dataclass
class Teams:
    default_token: str = BOT_TOKEN
    any_token: bool = False
    app_tokens: set[str] = field(default_factory=lambda: {APP_TOKEN})
    names: dict[str, str] = field(default_factory=dict)  # user id -> name, in every team (FakeSlack.names)

    def __post_init__(self):
        self.teams: dict[str, Team] = {}
        self._tokens: dict[str, str] = {}  # every token ever issued -> its team id
        self._revoked: set[str] = set()
        self.people: dict[str, Person] = {}  # user id -> a person `person` placed in a team
        self._numbers = itertools.count(2)
        self._lock = threading.RLock()
        self._register(Team(TEAM_ID, "Fake", "fake", self.default_token, BOT_USER_ID, BOT_ID))

    # teams and tokens -------------------------------------------------------------------

    def add(self, team_id: str | None = None, *, name: str | None = None, enterprise_id: str | None = None,
            enterprise_name: str | None = None, is_enterprise_install: bool = False,
            scopes=None, installer: str | None = None) -> Team:
        """A new workspace with its own bot token, bot user and bot id."""
        with self._lock:
            n = next(self._numbers)
            team_id = team_id or f"T0TEAM{n:03d}"
            if team_id in self.teams:
                raise ValueError(f"team {team_id} exists already")
            domain = f"team{n}"
            team = Team(team_id, name or f"Team {n}", domain, f"xoxb-{team_id.lower()}-test-token-not-real",
                        f"UBOT{n:04d}", f"BBOT{n:04d}", enterprise_id,
                        enterprise_name or (f"Org {enterprise_id}" if enterprise_id else None),
                        is_enterprise_install, tuple(scopes) if scopes is not None else None, installer)
            self._register(team)
            return team

    def get(self, team: str | Team | None) -> Team:
        team_id = team.id if isinstance(team, Team) else (team or TEAM_ID)
        with self._lock:
            if team_id not in self.teams:
                raise KeyError(f"the fake Slack has no team {team_id}")
            return self.teams[team_id]

    def revoke(self, team: str | Team | None = None) -> Team:
        """Revoke the team's bot token: every call with it answers `token_revoked` from now on."""
        with self._lock:
            found = self.get(team)
            self._revoked.add(found.bot_token)
            found.revoked = True
            return found

    def reinstall(self, team: Team, **changes) -> Team:
        """The team installs the app again: a revoked token is replaced by a new one (Slack never revives
        one); a live token stays. `changes` update scopes, installer, enterprise."""
        with self._lock:
            if team.revoked:
                generation = sum(1 for t in self._tokens.values() if t == team.id) + 1
                team.bot_token = f"xoxb-{team.id.lower()}-{generation}-test-token-not-real"
                team.revoked = False
                self._tokens[team.bot_token] = team.id
            for key, value in changes.items():
                setattr(team, key, tuple(value) if key == "scopes" and value is not None else value)
            return team

    def resolve(self, token: str | None, method: str) -> tuple[Team | None, str | None]:
        """(the team the token stands for, None) or (None, Slack's error)."""
        if not token:
            return None, "not_authed"
        with self._lock:
            if token in self._revoked:
                return None, "token_revoked"
            if token in self.app_tokens or (self.any_token and token.startswith("xapp-")):
                return (self.teams[TEAM_ID], None) if method in APP_LEVEL_METHODS else (None, "not_allowed_token_type")
            team_id = self._tokens.get(token)
            if team_id is None and not self.any_token:
                return None, "invalid_auth"
            if self.teams[team_id or TEAM_ID].revoked:  # "any token" standing for a team since revoked
                return None, "token_revoked"
            if method in APP_LEVEL_METHODS and not self.any_token:
                return None, "not_allowed_token_type"
            return self.teams[team_id or TEAM_ID], None

    def bot_token_team(self, token: str | None) -> Team | None:
        """The team whose live bot token this is (any `xoxb-` token in "any token" mode), else None."""
        if not token or not token.startswith("xoxb-"):
            return None
        team, error = self.resolve(token, "files.info")
        return None if error else team

    def _register(self, team: Team) -> None:
        self.teams[team.id] = team
        self._tokens[team.bot_token] = team.id

    # people -----------------------------------------------------------------------------

    def person(self, user: str, team: str | Team | None = None, **fields) -> Person:
        """Place a person in a team (and only there) with the given fields (Person's names)."""
        with self._lock:
            team_id = self.get(team).id
            current = self.people.get(user)
            base = current if current and current.team == team_id else Person(user, team_id)
            self.people[user] = replace(base, **fields)
            return self.people[user]

    def user_info(self, team: Team, user: str) -> dict:
        with self._lock:
            person = self.people.get(user)
        if person is not None and person.team != team.id:
            return {"ok": False, "error": "user_not_found"}
        if person is None:
            bot = user == team.bot_user_id
            person = Person(user, team.id, name="threadfork" if bot else None, is_bot=bot)
        return {"ok": True, "user": self._user_object(team, person)}

    def _user_object(self, team: Team, person: Person) -> dict:
        name = self.names.get(person.id) or person.name or f"person-{person.id[-4:].lower()}"
        real_name = person.real_name or name.title()
        profile = {"display_name": name, "real_name": real_name, "display_name_normalized": name,
                   "real_name_normalized": real_name, "team": team.id, "avatar_hash": "0fake",
                   "status_text": "", "status_emoji": ""}
        if person.email:
            profile["email"] = person.email
        if person.is_bot:
            profile["bot_id"] = team.bot_id if person.id == team.bot_user_id else f"B{person.id[1:]}"
        user = {"id": person.id, "team_id": team.id, "name": name, "deleted": person.deleted, "color": "9f69e7",
                "profile": profile, "is_bot": person.is_bot, "is_app_user": False, "updated": 1_700_000_000}
        if person.deleted:  # a deactivated account keeps no roles and no time zone
            return user
        zone = ZoneInfo(person.tz)
        offset = datetime.now(timezone.utc).astimezone(zone).utcoffset()
        user.update(real_name=real_name, tz=person.tz, tz_label=TZ_LABELS.get(person.tz, person.tz),
                    tz_offset=int(offset.total_seconds()) if offset is not None else 0,
                    is_admin=person.is_admin, is_owner=person.is_owner, is_primary_owner=person.is_primary_owner,
                    is_restricted=person.is_restricted, is_ultra_restricted=person.is_ultra_restricted,
                    has_2fa=False, is_email_confirmed=True, who_can_share_contact_card="EVERYONE")
        if team.enterprise_id:
            user["enterprise_user"] = {"id": person.id, "enterprise_id": team.enterprise_id,
                                       "enterprise_name": team.enterprise_name, "is_admin": person.is_admin,
                                       "is_owner": person.is_owner, "teams": [team.id]}
        return user

    def auth_test(self, team: Team) -> dict:
        """auth.test for a bot token: who the token is (bolt reads `bot_id` and `user_id` from it)."""
        answer = {"ok": True, "url": f"https://{team.domain}.fake.slack.test/" if team.id != TEAM_ID
                  else "https://fake.slack.test/", "team": team.name, "user": "threadfork",
                  "team_id": team.id, "user_id": team.bot_user_id, "bot_id": team.bot_id,
                  "is_enterprise_install": team.is_enterprise_install}
        if team.enterprise_id:
            answer["enterprise_id"] = team.enterprise_id
        return answer
