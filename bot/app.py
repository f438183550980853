"""The one wiring function: settings in, a ready Bolt app with its services out.

Nothing is built at import time. Tests pass their own settings (and may pass a clock) and get
exactly the production object graph, talking to whatever SLACK_API_URL and ANTHROPIC_BASE_URL say.
"""
from __future__ import annotations

import logging
import os
from dataclasses import dataclass, field, replace

from apscheduler.schedulers.background import BackgroundScheduler
from slack_bolt import App
from slack_bolt.authorization import AuthorizeResult
from slack_sdk import WebClient
from slack_sdk.errors import SlackApiError
from slack_sdk.oauth.installation_store.sqlalchemy import SQLAlchemyInstallationStore
from slack_sdk.web import SlackResponse

from .config import TOOLS, Settings
from .domain.settings import Choices
from .drain import DrainableExecutor
from .infrastructure.logs import about_request
from .llm.claude import Claude
from .scheduler import new_scheduler
from .secrets import Vault
from .services.access import AccessLists
from .services.facade import ChannelOptions, Services
from .services.policy import Policy
from .services.ports import Chat, Clock, Store
from .services.workspaces import Workspaces
from .slack import installs
from .slack.agent_sessions import SessionCalls
from .slack.channels import ChannelFacts
from .slack.clients import Installed, OneWorkspace, web_client
from .slack.downloads import Downloads
from .slack.file_stubs import FileStubs
from .slack.gateway import SlackChat
from .slack.intake import BoltDeliveries
from .slack.listeners import register, register_fallbacks
from .slack.pacing import Pacing
from .slack.pooled import connection_pool
from .slack.thinking import Reactions
from .store import Database, open_store, utcnow
from .tls import tls_context

log = logging.getLogger(__name__)


# named, Bolt looks for no name of its own: it would walk every frame of the stack with inspect.stack()
# (~0.2 s of CPU in a process with many modules loaded, each time an app is built)
APP_NAME = "threadfork"


class StartupError(Exception):
    pass


@dataclass
class Wiring:
    settings: Settings
    app: App
    services: Services
    store: Store
    db: Database
    executor: DrainableExecutor
    scheduler: BackgroundScheduler  # the sweep (started by bot/runtime.py) and every delayed call
    side_calls: tuple[DrainableExecutor, ...] = field(default=())  # best-effort Slack calls off the answer's path
    watcher: DrainableExecutor | None = None  # Stop's watcher (bot/services/stopping.py), its one thread


def build(settings: Settings, *, clock: Clock = utcnow) -> Wiring:
    try:  # a folder that cannot be made or written, a server that refuses, a schema that cannot be migrated
        db, store = open_store(settings.database_url, clock)
        db.create_schema()
    except Exception as error:
        reason = str(getattr(error, "orig", None) or error).splitlines()[0][:200]  # the driver's words, no URL
        raise StartupError(f"the database is not usable: {type(error).__name__}: {reason}") from None
    pool = connection_pool(tls_context())  # every Slack call of this process reuses its connections
    if settings.many_workspaces:
        client, identity = web_client(None, settings.slack_api_url, pool), None  # each request's token: its install
        # lookups read in transactions that never queue behind SQLite's writer
        clients = Installed(installs.installation_store(settings, db.engine), settings.slack_api_url, pool)
    else:
        client = web_client(settings.slack_bot_token.get_secret_value(), settings.slack_api_url, pool)
        who = _who_am_i(client)
        identity = who.get("user_id")
        clients = OneWorkspace(client, identity)
    claude = Claude(
        api_key=settings.anthropic_api_key.get_secret_value(),
        model=settings.threadfork_model,
        base_url=settings.anthropic_base_url,
        max_tokens=settings.threadfork_max_tokens,
        timeout=settings.threadfork_model_timeout,
        tools=settings.threadfork_tools,
        tool_max_uses=settings.threadfork_tool_max_uses,
        effort=settings.threadfork_effort,
    )
    policy = policy_of(settings)
    downloads = Downloads(clients, settings.slack_api_url, settings.threadfork_max_file_bytes)
    key = settings.threadfork_secret_key
    channels = ChannelOptions(
        defaults=replace(policy.channel, connectors=tuple(c.connector for c in settings.threadfork_connectors)),
        choices=Choices(settings.model_choices, TOOLS),
        lists=AccessLists(frozenset(settings.threadfork_allowed_channels), frozenset(settings.threadfork_allowed_users),
                          frozenset(settings.threadfork_admins)),
        secrets=Vault(key.get_secret_value() if key else None),
        connector_tokens={c.connector.name: c.token.get_secret_value() for c in settings.threadfork_connectors
                          if c.token})
    # every thread of the process is made here (or by its pools) and stopped by runtime.stop
    scheduler = new_scheduler()
    # every workspace's session calls, one pool: each waits a round trip to Slack, and a burst of forks answering
    # at once makes three apiece (processing, a rename, active)
    session_calls = DrainableExecutor(max_workers=32, thread_name_prefix="agent-sessions")
    reaction_calls = DrainableExecutor(max_workers=8, thread_name_prefix="thinking")
    watcher = DrainableExecutor(max_workers=1, thread_name_prefix="stop-watcher")
    # agent sessions and channel facts have adapters of their own (their calls are best effort, or cached)
    sessions = SessionCalls(clients, session_calls)
    pacing = Pacing(settings.threadfork_stream_updates_per_second)
    chat = replace(Chat.all_in(SlackChat(clients, downloads, sessions, pacing,
                                         reactions=Reactions(scheduler, reaction_calls))),
                   agent=sessions, channels=ChannelFacts(clients))
    workspaces = Workspaces(store, policy.retention_after_uninstall)
    # long model calls hold a worker each; ~200 replies must stream at once
    executor = DrainableExecutor(max_workers=settings.threadfork_workers, thread_name_prefix="threadfork")
    # HTTP requests are verified before Bolt sees them (bot/wsgi.py: Bolt's own check would log the
    # body of a forged request); Socket Mode needs no signature
    if settings.many_workspaces:
        installations = installs.installation_store(settings, db.engine)  # the install flow and uninstalls write
        app = _installable_app(settings, client, clients, db, installations, workspaces, executor)
    else:
        installations, app = None, _one_workspace_app(client, who, executor)
    services = Services(store, chat, claude, bot_user_id=clients.bot_user_id, policy=policy, channels=channels,
                        workspaces=workspaces, deliveries=BoltDeliveries(app, chat.answers), watcher=watcher)
    app.use(about_request)  # log lines name the team and channel they are about
    register(app, services, FileStubs(clients))
    installs.register_departures(app, installations, services, clients)  # before the catch-alls: see installs.py
    register_fallbacks(app, services)
    if settings.many_workspaces:
        log.info("Threadfork ready to be installed (model %s)", settings.threadfork_model)
    else:
        if who.get("team_id"):  # a token that works again after an uninstall: the workspace is back
            workspaces.installed(who["team_id"])
        log.info("Threadfork ready as %s (model %s)", identity, settings.threadfork_model)
    return Wiring(settings, app, services, store, db, executor, scheduler, (session_calls, reaction_calls),
                  watcher)


def policy_of(settings: Settings) -> Policy:
    """The one place Settings become the use cases' knobs; a channel's own settings start from
    `settings.channel_defaults()`."""
    return Policy(channel=settings.channel_defaults(), compact_at=settings.compact_at,
                  expiry_policy=settings.threadfork_fork_expiry_policy, retention=settings.threadfork_retention,
                  lease=settings.claim_ttl, max_file_bytes=settings.threadfork_max_file_bytes,
                  max_fork_depth=settings.threadfork_max_fork_depth,
                  retention_after_uninstall=settings.threadfork_retention_after_uninstall,
                  cache_ttl=settings.threadfork_cache_ttl)


def _who_am_i(client: WebClient) -> SlackResponse:
    """auth.test of the one bot token (the bot's user id…); a token Slack refuses stops start-up."""
    try:
        return client.auth_test()
    except SlackApiError as error:
        raise StartupError(f"Slack auth.test failed: {error.response.get('error')}") from None
    except Exception as error:
        raise StartupError(f"Slack is unreachable at SLACK_API_URL: {type(error).__name__}") from None


def _one_workspace_app(client: WebClient, who: SlackResponse, executor: DrainableExecutor) -> App:
    """Bolt with the one bot token. Bolt switches its own OAuth flow on when SLACK_CLIENT_ID and
    SLACK_CLIENT_SECRET are in the environment, and then ignores the token (nothing is answered): with
    SLACK_BOT_TOKEN set, every request is then authorized with that token here."""
    one_token = {}
    if os.environ.get("SLACK_CLIENT_ID") is not None and os.environ.get("SLACK_CLIENT_SECRET") is not None:
        result = AuthorizeResult.from_auth_test_response(auth_test_response=who, bot_token=client.token)
        one_token["authorize"] = lambda: result
    return App(name=APP_NAME, client=client, request_verification_enabled=False, token_verification_enabled=False,
               listener_executor=executor, **one_token)


def _installable_app(settings: Settings, client: WebClient, clients: Installed, db: Database,
                     installations: SQLAlchemyInstallationStore, workspaces: Workspaces,
                     executor: DrainableExecutor) -> App:
    """Bolt with its OAuth flow (bot/slack/installs.py)."""
    app = App(name=APP_NAME, client=client, request_verification_enabled=False, listener_executor=executor,
              signing_secret=settings.slack_signing_secret.get_secret_value(),
              authorize=installs.KeptInstallationAuthorize(settings, clients, client),
              oauth_settings=installs.oauth_settings(settings, installations, db.engine, workspaces, clients))
    return app
