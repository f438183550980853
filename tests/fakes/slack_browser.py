"""The browser's side of installing the app with OAuth v2, against the running app and the fake Slack.

Steps (docs.slack.dev/authentication/installing-with-oauth; slack_bolt.oauth.OAuthFlow):
1. GET the app's install path. Bolt answers its install page (200, an "Add to Slack" link) or a 302
   to Slack's authorize URL, and sets its state cookie (`slack-app-oauth-state=<state>`).
2. Slack's authorize page (https://slack.com/oauth/v2/authorize?client_id&scope&user_scope&state
   [&redirect_uri]): Slack refuses a client_id that is not the app's, and a redirect_uri the app does
   not list when the fake was told its list (`slack.oauth.redirect_urls`). The person approves
   (`slack.issue_code`) or cancels (`error=access_denied`).
3. The browser follows Slack's redirect to the redirect_uri (its path on the running app; Bolt's
   default `/slack/oauth_redirect` when the URL named none) with `code` and `state`, sending back
   the cookies the app set, as a browser does on a loopback origin (where Secure cookies count).
The app's answer to step 3 is what `install` returns, with everything that happened on the way.
"""
from __future__ import annotations

import html
import http.client
import re
from dataclasses import dataclass, field
from http.cookies import SimpleCookie
from urllib.parse import parse_qs, urlencode, urlparse

AUTHORIZE = "https://slack.com/oauth/v2/authorize"
REDIRECT_PATH = "/slack/oauth_redirect"


class SlackRefusedAuthorize(AssertionError):
    """Slack's authorize page would show an error instead of asking the person."""


@dataclass
class Page:
    status: int
    body: str
    headers: dict[str, list[str]] = field(default_factory=dict)

    def header(self, name: str) -> str | None:
        values = self.headers.get(name.lower())
        return values[0] if values else None


@dataclass
class Installation:
    """What happened: the app's answer to the redirect (`reply`), and the steps before it."""
    reply: Page
    install_page: Page
    authorize_url: str
    state: str | None
    code: str | None
    team: object | None  # slack_teams.Team (None when the person cancelled)
    requested_scopes: tuple[str, ...]
    cookies: dict[str, str]


def get(base_url: str, path_and_query: str, cookies: dict[str, str] | None = None) -> Page:
    """One GET, redirects not followed (a browser test must see them)."""
    target = urlparse(base_url)
    connection = http.client.HTTPConnection(target.hostname, target.port, timeout=10)
    headers = {"Cookie": "; ".join(f"{k}={v}" for k, v in cookies.items())} if cookies else {}
    try:
        connection.request("GET", path_and_query, headers=headers)
        response = connection.getresponse()
        found: dict[str, list[str]] = {}
        for name, value in response.getheaders():
            found.setdefault(name.lower(), []).append(value)
        return Page(response.status, response.read().decode(errors="replace"), found)
    finally:
        connection.close()


def install(app_url: str, slack, team=None, *, user: str = "UINSTALL1", scopes=None, enterprise_id=None,
            is_enterprise_install: bool = False, install_path: str = "/slack/install",
            approve: bool = True, cookies: bool = True) -> Installation:
    """Drive the whole install as a person's browser would; `scopes` overrides what the app asked for."""
    page = get(app_url, install_path)
    jar = _cookies(page) if cookies else {}
    url = _authorize_url(page)
    query = {k: v[0] for k, v in parse_qs(urlparse(url).query, keep_blank_values=True).items()}
    _check_authorize(url, query, slack)
    requested = tuple(s for s in query.get("scope", "").split(",") if s)
    redirect_uri = query.get("redirect_uri")
    state = query.get("state")
    grant = None
    if approve:
        grant = slack.issue_code(team, scopes=requested if scopes is None else tuple(scopes), user=user,
                                 enterprise_id=enterprise_id, is_enterprise_install=is_enterprise_install,
                                 redirect_uri=redirect_uri)
        back = {"code": grant.code, "state": state}
    else:
        back = {"error": "access_denied", "state": state}
    path = urlparse(redirect_uri).path if redirect_uri else REDIRECT_PATH
    reply = get(app_url, f"{path}?{urlencode({k: v for k, v in back.items() if v is not None})}", jar)
    return Installation(reply, page, url, state, grant.code if grant else None, grant.team if grant else None,
                        requested, jar)


def _cookies(page: Page) -> dict[str, str]:
    jar = SimpleCookie()
    for value in page.headers.get("set-cookie", []):
        jar.load(value)
    return {name: morsel.value for name, morsel in jar.items()}


def _authorize_url(page: Page) -> str:
    if 300 <= page.status < 400 and page.header("location"):
        return page.header("location")
    if page.status == 200:
        for href in re.findall(r'href="([^"]+)"', page.body):
            if html.unescape(href).startswith(AUTHORIZE):
                return html.unescape(href)
    raise AssertionError(f"the install page neither links nor redirects to {AUTHORIZE}: "
                         f"HTTP {page.status} {page.body[:200]!r}")


def _check_authorize(url: str, query: dict, slack) -> None:
    if not url.startswith(AUTHORIZE + "?"):
        raise SlackRefusedAuthorize(f"not Slack's authorize URL: {url}")
    if query.get("client_id") != slack.oauth.client_id:
        raise SlackRefusedAuthorize(f"Slack does not know client_id {query.get('client_id')!r}")
    allowed = slack.oauth.redirect_urls
    if allowed is not None and query.get("redirect_uri") is not None and query["redirect_uri"] not in allowed:
        raise SlackRefusedAuthorize(f"redirect_uri {query['redirect_uri']!r} is not one of the app's {allowed}")
    if not query.get("scope") and not query.get("user_scope"):
        raise SlackRefusedAuthorize("no scopes requested (Slack: invalid_scope)")
