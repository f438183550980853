"""The one wiring function: settings in, a ready Bolt app with its services out.

Nothing is built at import time. Tests pass their own settings (and may pass a clock) and get
exactly the production object graph, talking to whatever SLACK_API_URL and ANTHROPIC_BASE_URL say.
"""
from __future__ import annotations

import logging
from dataclasses import dataclass

from slack_bolt import App
from slack_sdk import WebClient
from slack_sdk.errors import SlackApiError

from .config import Settings
from .drain import DrainableExecutor
from .llm import Claude
from .services.facade import Services
from .services.policy import Policy
from .services.ports import Clock, Store
from .slack.downloads import Downloads
from .slack.gateway import SlackChat
from .slack.listeners import register
from .slack.retries import retry_handlers
from .store import Database, open_store, utcnow

log = logging.getLogger(__name__)


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


def build(settings: Settings, *, clock: Clock = utcnow) -> Wiring:
    db, store = open_store(settings.database_url, clock)
    try:
        db.create_schema()
    except Exception as error:
        reason = str(getattr(error, "orig", None) or error).splitlines()[0][:200]  # the driver's words, no URL
        raise StartupError(f"the database is not usable: {type(error).__name__}: {reason}") from None
    client = WebClient(
        token=settings.slack_bot_token.get_secret_value(),
        base_url=settings.slack_api_url,
        retry_handlers=retry_handlers(),
    )
    try:
        identity = client.auth_test()
    except SlackApiError as error:
        raise StartupError(f"Slack auth.test failed: {error.response.get('error')}") from None
    except Exception as error:
        raise StartupError(f"Slack is unreachable at SLACK_API_URL: {type(error).__name__}") from None
    claude = Claude(
        api_key=settings.anthropic_api_key.get_secret_value(),
        model=settings.threadfork_model,
        base_url=settings.anthropic_base_url,
        max_tokens=settings.threadfork_max_tokens,
        timeout=settings.threadfork_model_timeout,
        tools=settings.threadfork_tools,
        tool_max_uses=settings.threadfork_tool_max_uses,
    )
    policy = Policy(
        merge_policy=settings.threadfork_merge_policy,
        fork_token_budget=settings.threadfork_fork_token_budget,
        compact_at=settings.compact_at,
        idle_reminder=settings.threadfork_fork_idle_reminder,
        expiry=settings.threadfork_fork_expiry,
        expiry_policy=settings.threadfork_fork_expiry_policy,
        retention=settings.threadfork_retention,
        lease=settings.claim_ttl,
        max_file_bytes=settings.threadfork_max_file_bytes,
        max_fork_depth=settings.threadfork_max_fork_depth,
        merge_review=settings.threadfork_merge_review,
    )
    downloads = Downloads(settings.slack_bot_token.get_secret_value(), settings.slack_api_url,
                          settings.threadfork_max_file_bytes)
    services = Services(store, SlackChat(client, downloads), claude, bot_user_id=identity.get("user_id"),
                        policy=policy)
    # long model calls hold a worker each; ~200 replies must stream at once
    executor = DrainableExecutor(max_workers=settings.threadfork_workers, thread_name_prefix="threadfork")
    # HTTP requests are verified before Bolt sees them (bot/wsgi.py: Bolt's own check would log the
    # body of a forged request); Socket Mode needs no signature
    app = App(
        client=client,
        request_verification_enabled=False,
        token_verification_enabled=False,
        listener_executor=executor,
    )
    register(app, services)
    log.info("Threadfork ready as %s (model %s)", identity.get("user_id"), settings.threadfork_model)
    return Wiring(settings, app, services, store, db, executor)
