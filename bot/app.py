"""The one composition root: settings in, a ready Bolt app with its services out.

`build` makes everything once, in order, and patches nothing afterwards: the store, Slack's clients and
ports, Claude, every pool, timer and scheduler of the process (stopped by bot/entrypoints/runtime.py `stop`), the Bolt
app, then the use cases (`wire_services`: each given the store's ports its constructor names, and the
services it needs, already made) and the listeners. Nothing is built at import time. Tests pass their own
settings (and may pass a clock) and get exactly the production object graph, talking to whatever
SLACK_API_URL and ANTHROPIC_BASE_URL say; the unit tests and the eval call `wire_services` over fakes.
"""
from __future__ import annotations

import inspect
import logging
import os
from collections.abc import Callable, Mapping
from concurrent.futures import Executor
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
from .infrastructure.drain import DrainableExecutor
from .llm.claude import Claude
from .infrastructure.scheduler import Delays, new_scheduler
from .secrets import Vault
from .domain.settings import ChannelSettings
from .services.access import Access, AccessLists, SpendCaps
from .services.adoption import Adoption
from .services.attachments import Attachments
from .services.budgets import Budgets
from .services.catalog import Services
from .services.channel_admin import ChannelAdmin
from .services.commands import SlashCommands
from .services.compaction import Compactor
from .services.model_inputs import Connections
from .services.conversation import Conversation
from .services.queue import Queue
from .services.forks import Forks
from .services.gestures import Gestures
from .services.incoming import Deliveries, Intake
from .services.lifecycle import Lifecycle
from .services.liveness import Liveness, Stopping
from .services.merging import Merging
from .services.model_inputs import MemoryTools, ModelInputs
from .services.pane import AgentPane
from .services.policy import Policies, Policy
from .services.ports import BotUsers, Chat, Clock, Later, Model, Secrets, Store
from .services.remembering import Remembering
from .services.reviews import Reviews
from .services.incoming import Router
from .services.workspaces import Workspaces
from .slack import installs
from .slack.agent_sessions import SessionCalls
from .slack.channels import ChannelFacts
from .slack.clients import Installed, OneWorkspace, web_client
from .slack.downloads import Downloads
from .slack.gateway import SlackChat
from .slack.intake import BoltDeliveries
from .slack.listeners import FileStubs, about_request, register, register_fallbacks
from .slack.paging import Pacing
from .slack.reply import Reactions
from .slack.clients import connection_pool
from .store import Database, open_store, utcnow
from .infrastructure.tls import tls_context

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
    scheduler: BackgroundScheduler  # the sweep (started by bot/entrypoints/runtime.py) and every delayed call
    side_calls: tuple[DrainableExecutor, ...] = field(default=())  # best-effort Slack calls off the answer's path
    watcher: DrainableExecutor | None = None  # Stop's watcher (bot/services/liveness.py: Stopping), its one thread


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
    workspaces = made(Workspaces, store, policy.retention_after_uninstall)
    # long model calls hold a worker each; ~200 replies must stream at once
    executor = DrainableExecutor(max_workers=settings.threadfork_workers, thread_name_prefix="threadfork")
    # HTTP requests are verified before Bolt sees them (bot/entrypoints/wsgi.py: Bolt's own check would log the
    # body of a forged request); Socket Mode needs no signature
    if settings.many_workspaces:
        installations = installs.installation_store(settings, db.engine)  # the install flow and uninstalls write
        app = _installable_app(settings, client, clients, db, installations, workspaces, executor)
    else:
        installations, app = None, _one_workspace_app(client, who, executor)
    services = wire_services(store, chat, claude, clients.bot_user_id, policy, channels, workspaces,
                             BoltDeliveries(app, chat.answers), watcher, Delays(scheduler))
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


@dataclass(frozen=True)
class ChannelOptions:
    """What `/threadfork` offers and starts from, and the allow-lists (from Settings at wiring time)."""

    defaults: ChannelSettings
    choices: Choices
    lists: AccessLists = AccessLists()
    secrets: Secrets | None = None  # seals connectors' tokens (THREADFORK_SECRET_KEY)
    connector_tokens: Mapping[str, str] = field(default_factory=dict)  # THREADFORK_CONNECTORS' tokens, by name


def wire_services(store: Store, chat: Chat, model: Model, bot_user_id: str | None | BotUsers,
                  policy: Policy = Policy(), channels: ChannelOptions | None = None,
                  workspaces: Workspaces | None = None, deliveries: Deliveries | None = None,
                  watcher: Executor | None = None, later: Later | None = None) -> Services:
    """The use cases, each made once, after everything it uses. `chat`: Slack's ports (each service is given
    the ones it uses); `bot_user_id`: the bot's user id, or (many workspaces) a function of the team giving it;
    `channels`: what channels may choose and who may use Threadfork (default: everyone, one model);
    `workspaces`: installs and departures (the OAuth flow needs it before the Slack app exists); `deliveries`:
    the Slack app's replay of kept deliveries (none: the sweep replays nothing, as in the unit tests and the
    eval); `watcher`: the thread Stop's watcher runs on (none: a stop is obeyed only where it lands); `later`:
    the timer of delayed calls (none: an adopted thread read slowly is not told so)."""
    # without them: the model and tools the Model port was configured with (None), nothing to choose
    channels = channels or ChannelOptions(policy.channel, Choices((), ()))
    bot_users: BotUsers = bot_user_id if callable(bot_user_id) else (lambda team_id: bot_user_id)
    policies = made(Policies, store, policy, channels.defaults)  # each channel's: its settings over `policy`
    liveness = made(Liveness, store, policy.lease)
    intake = made(Intake, store, liveness, deliveries)
    compactor = made(Compactor, store, model, policy)
    budgets = made(Budgets, store, chat.posts, chat.answers, policies)
    connections = Connections(store.connector_tokens, channels.secrets, channels.defaults.connectors or (),
                              channels.connector_tokens)
    stopping = Stopping(store.stops, store.sessions, merge_policy=lambda c: policies.of(c).merge_policy,
                        answers=chat.answers, watcher=watcher)
    caps = made(SpendCaps, store, chat.replies, channels.defaults.monthly_spend_cap_usd, channels.lists.admins)
    inputs = made(ModelInputs, store, default_model=policy.channel.model)
    merging = made(Merging, store, inputs, chat.posts, model, liveness, connections, chat.agent, policy.cache_ttl)
    access = made(Access, store, chat.answers, chat.people, channels.lists)
    remembering = made(Remembering, store, chat.memory, chat.answers, chat.people, policies, access)
    conversation = made(Conversation, store, inputs, chat.replies, chat.answers, model, liveness, stopping,
                        budgets=budgets, connections=connections, agent=chat.agent, cache=policy.cache_ttl,
                        on_released=merging.answered, compactor=compactor, caps=caps,
                        memory_tools=made(MemoryTools, store, remembering, policy.channel.memory_tool),
                        queue=made(Queue, store))
    reviews = made(Reviews, store, chat.posts, chat.screens, chat.answers, policies, liveness, merging)
    forks = made(Forks, store, chat.posts, conversation, policies, merging, reviews, chat.agent, caps)
    workspaces = workspaces or made(Workspaces, store, policy.retention_after_uninstall)
    attachments = made(Attachments, store, chat.shared, model, policy.max_file_bytes)
    lifecycle = made(Lifecycle, store, chat.replies, chat.posts, conversation, forks, merging, compactor, intake,
                     policies, workspaces, attachments, access)
    adoption = made(Adoption, store, chat.posts, chat.people, chat.shared, liveness, bot_users, channels.defaults,
                    chat.agent, later)
    pane = made(AgentPane, store, chat.posts, chat.answers, chat.channels, chat.agent, access, policies)
    return Services(
        chat=chat, bot_user_id=bot_users, policies=policies, liveness=liveness, intake=intake, stopping=stopping,
        conversation=conversation, budgets=budgets, reviews=reviews, forks=forks, workspaces=workspaces,
        attachments=attachments, access=access, lifecycle=lifecycle, adoption=adoption, pane=pane,
        router=made(Router, store, chat.answers, chat.people, conversation, forks, budgets, attachments, adoption,
                    bot_users, access, caps, pane, remembering),
        commands=made(SlashCommands, store, chat.answers, chat.people, forks, policy, caps),
        channel_admin=made(ChannelAdmin, store, chat.replies, chat.answers, chat.screens, access, channels.defaults,
                           channels.choices, connections, remembering),
        gestures=made(Gestures, store, chat.answers, chat.screens, chat.people, conversation, forks, bot_users,
                      access, caps),
        remembering=remembering)


def made(make: Callable, store: Store, *args, **kwargs):
    """`make(*args, **kwargs)`, given by name each of the store's ports its constructor asks for (its
    keyword-only parameters, named as `Store`'s fields): a service's signature says what it touches."""
    ports = {name: getattr(store, name) for name, parameter in inspect.signature(make).parameters.items()
             if parameter.kind is parameter.KEYWORD_ONLY and name not in kwargs}
    return make(*args, **kwargs, **ports)


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
