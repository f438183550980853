"""Installing the app with OAuth v2: the codes Slack's authorize page hands the browser, and
`oauth.v2.access`, which trades one for the team's bot token.

Invariants (docs.slack.dev/reference/methods/oauth.v2.access and /authentication/installing-with-oauth):
- The app authenticates with HTTP Basic (client_id:client_secret), or with `client_id` and
  `client_secret` form fields. Checked in Slack's order: an unknown client id is `invalid_client_id`,
  a wrong secret `bad_client_secret`, then the code, then the redirect URI.
- A code is good for one exchange within ten minutes: a second exchange of it, or one never issued,
  is `invalid_code`.
- A code issued to a `redirect_uri` must be exchanged with that same URI (RFC 6749 4.1.3, which
  Slack follows: "must match the originally submitted URI"), else `bad_redirect_uri`.
- Approving the install is what creates the bot token: a new team gets one, a reinstall keeps a
  live token, and a team whose token was revoked gets a new one (slack_teams.Teams.reinstall).
- The answer has Slack's shape: access_token, token_type "bot", scope (comma-separated), bot_user_id,
  app_id, team {id, name} (null for an organization-wide install), enterprise {id, name} or null,
  authed_user {id}, is_enterprise_install.
"""
from __future__ import annotations

import base64
import hashlib
import itertools
import threading
import time
from dataclasses import dataclass

from .slack_teams import APP_ID, Team, Teams

CLIENT_ID = "1000000001.2000000001"
CLIENT_SECRET = "test-client-secret-not-real"
CODE_LIFETIME = 600.0  # seconds: Slack's codes expire after ten minutes
DEFAULT_SCOPES = ("app_mentions:read", "channels:history", "chat:write", "commands", "users:read")


@dataclass
class Grant:
    """A code the authorize page gave the browser, and the team it installs into."""
    code: str
    team: Team
    user: str
    scopes: tuple[str, ...]
    redirect_uri: str | None
    issued: float
    used: bool = False


class OAuth:
    def __init__(self, teams: Teams, client_id: str = CLIENT_ID, client_secret: str = CLIENT_SECRET):
        self.teams = teams
        self.client_id = client_id
        self.client_secret = client_secret
        self.redirect_urls: list[str] | None = None  # the app's configured Redirect URLs; None: any
        self.grants: dict[str, Grant] = {}
        self._numbers = itertools.count(1)
        self._lock = threading.Lock()

    def issue_code(self, team: str | Team | None = None, *, scopes=DEFAULT_SCOPES, user: str = "UINSTALL1",
                   enterprise_id: str | None = None, is_enterprise_install: bool = False,
                   redirect_uri: str | None = None, team_name: str | None = None) -> Grant:
        """What Slack does when `user` approves the install in `team` (a new team when None or unknown)."""
        scopes = tuple(s for s in scopes if s)
        known = team if isinstance(team, Team) else self.teams.teams.get(team or "")
        if known is None:
            known = self.teams.add(team if isinstance(team, str) else None, name=team_name,
                                   enterprise_id=enterprise_id, is_enterprise_install=is_enterprise_install,
                                   scopes=scopes, installer=user)
        else:
            known = self.teams.reinstall(known, scopes=scopes, installer=user,
                                         is_enterprise_install=is_enterprise_install,
                                         **({"enterprise_id": enterprise_id} if enterprise_id else {}))
        n = next(self._numbers)
        digest = hashlib.sha256(f"{known.id}:{n}".encode()).hexdigest()
        grant = Grant(f"{n}.{4644010092847 + n}.{digest}", known, user, scopes, redirect_uri, time.monotonic())
        with self._lock:
            self.grants[grant.code] = grant
        return grant

    def access(self, args: dict, basic: tuple[str, str] | None) -> dict:
        """oauth.v2.access."""
        client_id, client_secret = basic or (args.get("client_id"), args.get("client_secret"))
        if client_id != self.client_id:
            return {"ok": False, "error": "invalid_client_id"}
        if client_secret != self.client_secret:
            return {"ok": False, "error": "bad_client_secret"}
        with self._lock:
            grant = self.grants.get(args.get("code") or "")
            if grant is None or grant.used or time.monotonic() - grant.issued > CODE_LIFETIME:
                return {"ok": False, "error": "invalid_code"}
            if grant.redirect_uri is not None and args.get("redirect_uri") != grant.redirect_uri:
                return {"ok": False, "error": "bad_redirect_uri"}
            grant.used = True
        team = grant.team
        enterprise = {"id": team.enterprise_id, "name": team.enterprise_name} if team.enterprise_id else None
        return {"ok": True, "access_token": team.bot_token, "token_type": "bot", "scope": ",".join(grant.scopes),
                "bot_user_id": team.bot_user_id, "app_id": APP_ID,
                "team": None if team.is_enterprise_install else {"id": team.id, "name": team.name},
                "enterprise": enterprise, "authed_user": {"id": grant.user},
                "is_enterprise_install": team.is_enterprise_install}


def basic_credentials(header: str) -> tuple[str, str] | None:
    """(client_id, client_secret) from an `Authorization: Basic …` header, else None."""
    if not header.startswith("Basic "):
        return None
    try:
        decoded = base64.b64decode(header[len("Basic "):].strip(), validate=True).decode()
    except (ValueError, UnicodeDecodeError):
        return None
    client_id, _, client_secret = decoded.partition(":")
    return client_id, client_secret
