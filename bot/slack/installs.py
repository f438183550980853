"""Installing into many workspaces: Bolt's OAuth v2 flow on slack-sdk's SQLAlchemy stores, in the
bot's own database (tables from migration 0006). Threadfork writes no token anywhere itself.

- GET /slack/install: Bolt's install page, linking to Slack's authorize URL with the client id,
  BOT_SCOPES and a state, kept in the state store and in Bolt's state cookie.
- GET /slack/oauth_redirect: Bolt checks the state (store and cookie), trades the code with
  oauth.v2.access at SLACK_API_URL and saves the installation; a workspace that had left returns.
- Every request is authorized from its team's installation as clients.py keeps it (CACHE_TTL): a
  workspace without an installation is refused before any listener runs.
- app_uninstalled, and tokens_revoked naming the bot, go to Bolt's token revocation listeners,
  which delete the workspace's installation; the departure is recorded (services/workspaces.py).
"""
from __future__ import annotations

import logging
from urllib.parse import urlsplit

from slack_bolt import App, BoltContext, BoltResponse
from slack_bolt.authorization import AuthorizeResult
from slack_bolt.authorization.authorize import Authorize, InstallationStoreAuthorize
from slack_bolt.listener.builtins import TokenRevocationListeners
from slack_bolt.oauth.callback_options import CallbackOptions, FailureArgs, SuccessArgs
from slack_bolt.oauth.oauth_settings import OAuthSettings
from slack_sdk.oauth.installation_store.sqlalchemy import SQLAlchemyInstallationStore
from slack_sdk.oauth.state_store.sqlalchemy import SQLAlchemyOAuthStateStore
from sqlalchemy import Engine

from ..config import Settings
from ..services.catalog import Services
from ..services.workspaces import Workspaces
from .clients import Clients, Installed
from .intake import delivered

log = logging.getLogger(__name__)

# the bot scopes the install asks for: manifest.yml's oauth_config.scopes.bot, exactly (a unit test
# compares them; the manifest is not part of the installed package)
BOT_SCOPES = ("app_mentions:read", "assistant:write", "channels:history", "channels:read", "groups:history",
              "groups:read", "im:history", "mpim:history", "chat:write", "commands", "files:read", "reactions:read",
              "reactions:write", "users:read")
STATE_TTL = 600  # seconds an install may take from the install page to Slack's redirect back
REDIRECT_PATH = "/slack/oauth_redirect"


def installation_store(settings: Settings, engine: Engine) -> SQLAlchemyInstallationStore:
    return SQLAlchemyInstallationStore(client_id=settings.slack_client_id, engine=engine, logger=log)


def oauth_settings(settings: Settings, installations: SQLAlchemyInstallationStore, engine: Engine,
                   workspaces: Workspaces, clients: Clients) -> OAuthSettings:
    redirect_url = settings.threadfork_install_redirect_url
    secret = settings.slack_client_secret.get_secret_value()

    def installed(args: SuccessArgs) -> BoltResponse:
        team_id = args.installation.team_id
        if team_id:
            clients.forget(team_id)  # a reinstall may bring a new token
            workspaces.installed(team_id)
        log.info("installed in workspace %s", team_id or args.installation.enterprise_id)
        return args.default.success(args)

    def refused(args: FailureArgs) -> BoltResponse:
        log.warning("an install was refused: %s", args.reason)  # the reason only: no code, state or secret
        return args.default.failure(args)

    return OAuthSettings(
        client_id=settings.slack_client_id, client_secret=secret, scopes=list(BOT_SCOPES), user_scopes=[],
        redirect_uri=redirect_url, redirect_uri_path=urlsplit(redirect_url).path if redirect_url else REDIRECT_PATH,
        installation_store=installations,
        state_store=SQLAlchemyOAuthStateStore(expiration_seconds=STATE_TTL, engine=engine, logger=log),
        state_expiration_seconds=STATE_TTL,
        callback_options=CallbackOptions(success=installed, failure=refused),
        logger=log,
    )


class KeptInstallationAuthorize(Authorize):
    """Each request authorized from its team's installation as `clients` keeps it (read again every CACHE_TTL
    seconds, at once after this process saw an uninstall): an acknowledgement waits for no read of the
    installation store — Bolt's own authorize made two a request (the team's installation, then the sender's
    user token, which Threadfork never asks for), each a transaction of its own (bench: burst acks). The team's
    bot entity carries everything Bolt's auth.test would tell (bot id, bot user, scopes). An org-wide install
    (no team, or `is_enterprise_install`) goes to Bolt's installation-store authorize, as before."""

    def __init__(self, settings: Settings, clients: Installed, client):
        self.clients = clients
        self.org_wide = InstallationStoreAuthorize(
            installation_store=clients.installations, client_id=settings.slack_client_id,
            client_secret=settings.slack_client_secret.get_secret_value(), cache_enabled=True, client=client,
            logger=log)

    def __call__(self, *, context: BoltContext, enterprise_id: str | None, team_id: str | None,
                 user_id: str | None, **actor) -> AuthorizeResult | None:
        if not team_id or context.is_enterprise_install:
            return self.org_wide(context=context, enterprise_id=enterprise_id, team_id=team_id, user_id=user_id,
                                 **actor)
        bot = self.clients.bot(team_id)
        if bot is None:
            return None
        return AuthorizeResult(enterprise_id=bot.enterprise_id, team_id=bot.team_id, bot_token=bot.bot_token,
                               bot_id=bot.bot_id, bot_user_id=bot.bot_user_id, bot_scopes=bot.bot_scopes)


def register_departures(app: App, installations: SQLAlchemyInstallationStore | None, services: Services,
                        clients: Clients) -> None:
    """Before the catch-all listener: an uninstall, or the bot's token revoked, ends the installation
    (with one bot token, there is none to delete: the departure alone is recorded, and the sweep deletes
    the workspace's conversations after the retention all the same). Both are kept in the durable
    inbox like any delivery, so a failure here is retried, not lost."""
    builtins = TokenRevocationListeners(installations) if installations is not None else None

    def gone(context) -> None:
        if builtins is not None:
            builtins.handle_app_uninstalled_events(context)  # every installation row of the workspace
        if context.team_id:
            clients.forget(context.team_id)
            services.workspaces.departed(context.team_id)

    @app.event("app_uninstalled")
    def on_app_uninstalled(context):
        with delivered(services, context):
            gone(context)

    @app.event("tokens_revoked")
    def on_tokens_revoked(event, context):
        with delivered(services, context):
            if builtins is not None:
                builtins.handle_tokens_revoked_events(event, context)  # revoked user tokens' installations
            if (event.get("tokens") or {}).get("bot"):
                gone(context)
