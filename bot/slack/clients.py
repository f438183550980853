"""Which WebClient speaks for a workspace, and who the bot is there: the one place a token is chosen.

- One workspace (SLACK_BOT_TOKEN): one client and the bot user auth.test named at start-up, whatever
  the team.
- Many workspaces (OAuth): the team's bot token and bot user from its installation, read from
  slack-sdk's installation store (the tables Bolt's install flow writes) and kept CACHE_TTL seconds,
  so an uninstall reaches every replica within that; a team with no installation gets
  ChatUnavailable, and its bot user id is None.
Every client is slack-sdk's WebClient talking to SLACK_API_URL with the same retries, its calls on the
process's one pool of kept-alive connections (urllib3's, verifying with bot/infrastructure/tls.py's context).

Kept-alive connections: slack-sdk's WebClient and WebhookClient over urllib3's pool.

slack-sdk opens a new connection for every call — against slack.com a TCP and a TLS handshake each time, two
round trips before the request leaves and ~2 ms of client CPU (docs/production.md) — and has no public hook
for another HTTP library. These subclasses replace one private method each, the one that sends a request
slack-sdk built; slack-sdk still builds every request, decides every retry (below) and reads every
answer. pyproject.toml bounds slack-sdk above; tests/unit/test_slack_pool.py fails when the seam moves.

Invariants:
- An answer reaches slack-sdk as urllib's would: its headers as an email Message (urllib's type), a status
  ≥ 400 raised as urllib's HTTPError carrying them and the body (slack-sdk reads a 429's Retry-After there).
- urllib3 retries nothing and follows no redirect; its connection errors reach slack-sdk's retry handlers
  as urllib3 raises them (FAILURES names them). urllib3 replaces a connection the server closed while idle.
- A client with a proxy (slack-sdk reads HTTPS_PROXY and the like itself) goes through slack-sdk's own urllib.

Retries: slack-sdk's retry handlers, tuned for what a reply needs.

- Connection errors (urllib's and, on the kept-alive connections, urllib3's: a connection not
  made, or lost before an answer) and 5xx are retried with exponential backoff and jitter, `ratelimited` (429)
  after `Retry-After` — except as below.
- chat.appendStream is never repeated after a 5xx or a lost connection: Slack may have applied it
  before failing, and a second append would show the same words twice. The reply rewrites the
  message with chat.update instead (reply.py), which is the same whether or not the append landed.
- chat.startStream (Tier 2, about 20 a minute per workspace) does not wait out `Retry-After`: the
  reply posts and updates a message at once instead.
What is left over reaches the caller as one of FAILURES, named in logs by failure_code().
"""
from __future__ import annotations

import io
import ssl
import threading
import time
import urllib.request
from email.message import Message
from http import client as http_errors  # its exception types only: see FAILURES
from typing import Protocol
from urllib.error import HTTPError
from urllib.parse import urlparse

import urllib3
from slack_sdk import WebClient
from slack_sdk.errors import SlackApiError, SlackClientError
from slack_sdk.http_retry import RetryHandler
from slack_sdk.http_retry.builtin_handlers import (
    ConnectionErrorRetryHandler,
    RateLimitErrorRetryHandler,
    ServerErrorRetryHandler,
)
from slack_sdk.http_retry.request import HttpRequest
from slack_sdk.oauth.installation_store.models.bot import Bot
from slack_sdk.oauth.installation_store.sqlalchemy import SQLAlchemyInstallationStore
from slack_sdk.webhook import WebhookClient, WebhookResponse
from sqlalchemy import desc, select
from urllib3.exceptions import ConnectTimeoutError, HTTPError as Urllib3Error, NewConnectionError, ProtocolError

from ..domain.errors import ChatUnavailable
from ..infrastructure import metrics


NOT_REPEATED = frozenset({"chat.appendStream"})
NOT_WAITED = frozenset({"chat.startStream"})
SERVER_ERRORS = frozenset({500, 502, 503, 504})
# refused, 5xx, or no answer at all: urllib3's errors, and through a proxy (slack-sdk's urllib) the standard
# library's, which it lets out unwrapped (a lost connection an OSError, a broken answer an HTTPException)
FAILURES = (SlackClientError, OSError, Urllib3Error, http_errors.HTTPException)
# slack-sdk's own list (urllib's URLError, ConnectionResetError, RemoteDisconnected) and urllib3's equivalents
CONNECTION_ERRORS = [*ConnectionErrorRetryHandler().error_types_to_do_retries,
                     NewConnectionError, ConnectTimeoutError, ProtocolError]


def failure_code(error: BaseException) -> str:
    """Slack's error code, else the HTTP status, else the kind of connection failure (never a token)."""
    if isinstance(error, SlackApiError):
        status = error.response.status_code
        return f"http_{status}" if status >= 500 else str(error.response.get("error") or f"http_{status}")[:100]
    return type(error).__name__


def retry_after(error: BaseException, default: float = 60.0) -> float:
    """Seconds a `ratelimited` answer asks to wait."""
    headers = error.response.headers if isinstance(error, SlackApiError) else {}
    value = next((v for k, v in (headers or {}).items() if k.lower() == "retry-after"), None)
    value = value[0] if isinstance(value, list) else value
    try:
        return float(value)
    except (TypeError, ValueError):
        return default


def method_of(request: HttpRequest) -> str:
    """`chat.update` for https://slack.com/api/chat.update (a response_url gives its last segment)."""
    return urlparse(request.url).path.rsplit("/", 1)[-1]


# each handler asks first what the library asks (cheap: a status, an error's type), the method only then: every
# successful call passes through every handler


class ConnectionErrors(ConnectionErrorRetryHandler):
    def _can_retry(self, *, state, request, response=None, error=None) -> bool:
        return super()._can_retry(state=state, request=request, response=response, error=error) \
            and method_of(request) not in NOT_REPEATED


class ServerErrors(ServerErrorRetryHandler):
    def _can_retry(self, *, state, request, response=None, error=None) -> bool:
        return (response is not None and response.status_code in SERVER_ERRORS
                and method_of(request) not in NOT_REPEATED)


class RateLimits(RateLimitErrorRetryHandler):
    def _can_retry(self, *, state, request, response=None, error=None) -> bool:
        if response is not None and response.status_code == 429:  # each one, retried or not
            metrics.SLACK_RATELIMITED.labels(method_of(request)).inc()
        return super()._can_retry(state=state, request=request, response=response, error=error) \
            and method_of(request) not in NOT_WAITED


def retry_handlers() -> list[RetryHandler]:
    """For every WebClient and response_url WebhookClient the bot builds."""
    return [ConnectionErrors(max_retry_count=2, error_types=CONNECTION_ERRORS), ServerErrors(max_retry_count=2), RateLimits(max_retry_count=3)]


POOL_SIZE = 128  # kept-alive connections per host; a burst beyond it opens (and then closes) more


def connection_pool(tls: ssl.SSLContext) -> urllib3.PoolManager:
    """One per process (a gunicorn worker builds its own after the fork)."""
    return urllib3.PoolManager(maxsize=POOL_SIZE, block=False, retries=False, ssl_context=tls)


class PooledWebClient(WebClient):
    def __init__(self, *args, pool: urllib3.PoolManager, **kwargs):
        super().__init__(*args, **kwargs)
        self.pool = pool

    def _perform_urllib_http_request_internal(self, url: str, req: urllib.request.Request) -> dict:
        if self.proxy:
            return super()._perform_urllib_http_request_internal(url, req)
        status, headers, body = send(self.pool, url, req, self.timeout)
        return {"status": status, "headers": headers, "body": body}


class PooledWebhookClient(WebhookClient):
    """A response_url's client (an answer to a slash command, a button, a shortcut), on the same pool."""

    def __init__(self, *args, pool: urllib3.PoolManager, **kwargs):
        super().__init__(*args, **kwargs)
        self.pool = pool

    def _perform_http_request_internal(self, url: str, req: urllib.request.Request) -> WebhookResponse:
        if self.proxy:
            return super()._perform_http_request_internal(url, req)
        status, headers, body = send(self.pool, url, req, self.timeout)
        return WebhookResponse(url=url, status_code=status, body=body, headers=headers)


def send(pool: urllib3.PoolManager, url: str, req: urllib.request.Request, timeout: float
         ) -> tuple[int, Message, str]:
    """The request slack-sdk built, over the pool: (status, headers, decoded body), or HTTPError for ≥ 400."""
    response = pool.request(req.get_method(), url, body=req.data, headers=dict(req.header_items()),
                            timeout=timeout, redirect=False, retries=False)
    headers = Message()
    for name, value in response.headers.items():
        headers[name] = value
    if response.status >= 400:
        raise HTTPError(url, response.status, response.reason or "", headers, io.BytesIO(response.data))
    return response.status, headers, response.data.decode(headers.get_content_charset() or "utf-8")


CACHE_TTL = 30.0  # seconds a workspace's token is reused before the installation store is read again
NOT_INSTALLED = "Threadfork is not installed in this workspace any more — install it again to use it."


class Clients(Protocol):
    pool: urllib3.PoolManager  # the process's kept-alive connections: response_urls are answered on them too

    def for_team(self, team_id: str) -> WebClient:
        """The client carrying the team's bot token; raises ChatUnavailable when the team has none."""
    def bot_user_id(self, team_id: str) -> str | None:
        """The bot's own user id in that team (None when it is not installed there)."""
    def forget(self, team_id: str) -> None:
        """The team's installation is gone: stop using its token now."""


def web_client(token: str | None, api_url: str, pool: urllib3.PoolManager) -> WebClient:
    """A client of SLACK_API_URL with the bot's retries, its calls on the process's kept-alive connections."""
    return _Client(token=token, base_url=api_url, retry_handlers=retry_handlers(), pool=pool,
                   ssl=pool.connection_pool_kw.get("ssl_context"))  # through a proxy, urllib verifies with it


class _Client(PooledWebClient):
    """Every Web API call counted (threadfork_slack_calls_total) by method and final outcome."""

    def api_call(self, api_method: str, **kwargs):
        try:
            response = super().api_call(api_method, **kwargs)
        except SlackApiError as error:
            metrics.SLACK_CALLS.labels(api_method, str(error.response.get("error")
                                                       or f"http_{error.response.status_code}")[:40]).inc()
            raise
        except Exception as error:
            metrics.SLACK_CALLS.labels(api_method, type(error).__name__).inc()
            raise
        metrics.SLACK_CALLS.labels(api_method, "ok").inc()
        return response


class OneWorkspace:
    """SLACK_BOT_TOKEN's client for every team."""

    def __init__(self, client: PooledWebClient, bot_user_id: str | None):
        self.client = client
        self.pool = client.pool
        self._bot_user_id = bot_user_id

    def for_team(self, team_id: str) -> WebClient:
        return self.client

    def bot_user_id(self, team_id: str) -> str | None:
        return self._bot_user_id

    def forget(self, team_id: str) -> None:
        pass


class Installed:
    """Each team's own client, from its installation."""

    def __init__(self, installations: SQLAlchemyInstallationStore, api_url: str, pool: urllib3.PoolManager,
                 clock=time.monotonic):
        self.installations = installations
        self.api_url = api_url
        self.pool = pool
        self.clock = clock
        self._known: dict[str, tuple[Bot, WebClient, float]] = {}  # team → its bot, client, when read
        self._lock = threading.Lock()

    def for_team(self, team_id: str) -> WebClient:
        found = self._installed(team_id)
        if found is None:
            raise ChatUnavailable(NOT_INSTALLED)
        return found[1]

    def bot_user_id(self, team_id: str) -> str | None:
        found = self._installed(team_id)
        return found[0].bot_user_id if found else None

    def bot(self, team_id: str) -> Bot | None:
        """The team's installed bot (its token, ids and scopes), as kept; None when it is not installed."""
        found = self._installed(team_id)
        return found[0] if found else None

    def forget(self, team_id: str) -> None:
        with self._lock:
            self._known.pop(team_id, None)

    def _installed(self, team_id: str) -> tuple[Bot, WebClient] | None:
        with self._lock:
            known = self._known.get(team_id)
        if known and self.clock() - known[2] < CACHE_TTL:
            return known[0], known[1]
        bot = self._latest_bot(team_id) if team_id else None
        if bot is None:  # not cached: an install elsewhere is seen at once
            self.forget(team_id)
            return None
        same = known and known[0].bot_token == bot.bot_token
        client = known[1] if same else web_client(bot.bot_token, self.api_url, self.pool)
        with self._lock:
            self._known[team_id] = (bot, client, self.clock())
        return bot, client

    def _latest_bot(self, team_id: str) -> Bot | None:
        """The team's newest bot token. By team alone, unlike find_bot (which also wants the enterprise):
        a team id is all a stored fork or an event's team knows, and it is unique across enterprises."""
        store = self.installations
        c = store.bots.c
        query = (select(store.bots)
                 .where(c.client_id == store.client_id, c.team_id == team_id, c.bot_token.is_not(None))
                 .order_by(desc(c.installed_at)).limit(1))
        with store.engine.connect() as conn:
            row = conn.execute(query).mappings().first()
        return store.build_bot_entity(row) if row else None
