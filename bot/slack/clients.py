"""Which WebClient speaks for a workspace, and who the bot is there: the one place a token is chosen.

- One workspace (SLACK_BOT_TOKEN): one client and the bot user auth.test named at start-up, whatever
  the team.
- Many workspaces (OAuth): the team's bot token and bot user from its installation, read from
  slack-sdk's installation store (the tables Bolt's install flow writes) and kept CACHE_TTL seconds,
  so an uninstall reaches every replica within that; a team with no installation gets
  ChatUnavailable, and its bot user id is None.
Every client is slack-sdk's WebClient talking to SLACK_API_URL with the same retries, its calls on the
process's one pool of kept-alive connections (pooled.py: urllib3's, verifying with bot/infrastructure/tls.py's context).
"""
from __future__ import annotations

import threading
import time
from typing import Protocol

import urllib3
from slack_sdk import WebClient
from slack_sdk.oauth.installation_store.models.bot import Bot
from slack_sdk.oauth.installation_store.sqlalchemy import SQLAlchemyInstallationStore
from sqlalchemy import desc, select

from ..domain.errors import ChatUnavailable
from ..infrastructure.metrics import CountsCalls
from .pooled import PooledWebClient
from .retries import retry_handlers

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


class _Client(CountsCalls, PooledWebClient):
    """Every Web API call counted (threadfork_slack_calls_total) by method and outcome."""


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
