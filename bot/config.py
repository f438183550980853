"""Settings, parsed once from the environment (real variables win over a `.env` file).

Only the secrets are required. Every missing or invalid setting is named at once, in one "Threadfork
cannot start: …" line (`python -m bot check` lists them one a line), whichever it is: a field's own
check or a rule between several (which token goes with which mode).
One workspace: SLACK_BOT_TOKEN. Many workspaces (Slack's OAuth install): SLACK_CLIENT_ID and
SLACK_CLIENT_SECRET without a bot token; each workspace's token then comes from its installation.
Secrets are SecretStr, so they never appear in a repr, a log line or an error.
"""
from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Annotated, Literal

from pydantic import BeforeValidator, Field, SecretStr, ValidationError, field_validator, model_validator
from pydantic_settings import BaseSettings, NoDecode, SettingsConfigDict

from .domain.caching import CacheMode
from .domain.connectors import MAX_CONNECTORS, Connector, check_name, check_url, parse_tools as parse_tool_names
from .domain.durations import parse_duration
from .domain.settings import MAX_BUDGET, MAX_DURATION, ChannelSettings
from .domain.sizes import parse_size
from .secrets import check_key

DEFAULT_DATABASE_URL = "sqlite:///data/threadfork.db"
MAX_CLAIM_TTL = 30.0  # seconds
LOG_FORMAT = "%(asctime)s %(levelname)s %(name)s: %(message)s"  # the bot's lines and gunicorn's alike
LOG_LEVELS = ("DEBUG", "INFO", "WARNING", "ERROR", "CRITICAL")
DATABASES = ("sqlite", "postgresql")  # the backends the store is built and tested for

Seconds = Annotated[float, BeforeValidator(parse_duration)]
SecondsOrNow = Annotated[float, BeforeValidator(lambda value: parse_duration(value, zero_ok=True))]  # 0: at once
Bytes = Annotated[int, BeforeValidator(parse_size)]


class ConfigError(Exception):
    """Every problem of the settings, each a sentence naming its variable (never a value of a secret)."""

    def __init__(self, problems: list[str]):
        super().__init__("Threadfork cannot start: " + "; ".join(problems))
        self.problems = problems


class ChannelDefault:
    """Marks a setting as the environment's default of the channel setting (`/threadfork`) named so: a
    channel whose admins chose nothing follows it (Settings.channel_defaults)."""

    def __init__(self, name: str):
        self.name = name


TOOLS = ("web_search", "web_fetch")


def parse_tools(value) -> tuple[str, ...]:
    """`web_search,web_fetch` (any order, either, or none) as a tuple; unknown names are refused."""
    names = [n.strip().lower() for n in (value.split(",") if isinstance(value, str) else value) if n.strip()]
    unknown = [n for n in names if n not in TOOLS]
    if unknown:
        raise ValueError(f"unknown tools {', '.join(unknown)}; choose from {', '.join(TOOLS)}")
    return tuple(dict.fromkeys(names))


ToolNames = Annotated[tuple[str, ...], NoDecode, BeforeValidator(parse_tools)]


def parse_list(value) -> tuple[str, ...]:
    """A comma list (`U1,U2`, spaces allowed) as a tuple without blanks or repeats; empty: nothing."""
    items = value.split(",") if isinstance(value, str) else (value or ())
    return tuple(dict.fromkeys(item.strip() for item in items if item and item.strip()))


Names = Annotated[tuple[str, ...], NoDecode, BeforeValidator(parse_list)]


@dataclass(frozen=True)
class ConfiguredConnector:
    """A default connector of every channel (THREADFORK_CONNECTORS); its token stays in the environment."""

    connector: Connector
    token: SecretStr | None = None


def parse_connectors(value) -> tuple[ConfiguredConnector, ...]:
    """`[{"name": …, "url": "https://…", "token": …, "allowed_tools": […]}]`, checked as the settings modal
    checks a channel's; a refusal names the entry, never its token."""
    try:
        entries = json.loads(value) if isinstance(value, str) else value
    except ValueError:
        raise ValueError("not a JSON list like [{\"name\": \"tracker\", \"url\": \"https://…\"}]") from None
    if isinstance(entries, tuple) and all(isinstance(e, ConfiguredConnector) for e in entries):
        return entries  # the default, or parsed already
    if not isinstance(entries, list):
        raise ValueError("not a JSON list of connectors")
    if len(entries) > MAX_CONNECTORS:
        raise ValueError(f"at most {MAX_CONNECTORS} connectors")
    out, names = [], set()
    for n, entry in enumerate(entries, 1):
        if not isinstance(entry, dict) or not isinstance(entry.get("name"), str) or not isinstance(entry.get("url"), str):
            raise ValueError(f"connector {n} needs a \"name\" and a \"url\"")
        problem = check_name(entry["name"]) or check_url(entry["url"]) or (
            "its name is used twice" if entry["name"] in names else None)
        if problem:
            raise ValueError(f"connector {n}: {problem}")
        names.add(entry["name"])
        tools = entry.get("allowed_tools")
        if tools is not None and (not isinstance(tools, list) or not all(isinstance(t, str) for t in tools)):
            raise ValueError(f"connector {n}: allowed_tools must be a list of tool names")
        token = entry.get("token")
        if token is not None and not isinstance(token, str):
            raise ValueError(f"connector {n}: its token must be a string")
        allowed = parse_tool_names(",".join(tools)) if tools else None
        out.append(ConfiguredConnector(Connector(entry["name"], entry["url"], allowed),
                                       SecretStr(token) if token else None))
    return tuple(out)


Connectors = Annotated[tuple[ConfiguredConnector, ...], NoDecode, BeforeValidator(parse_connectors)]


class Settings(BaseSettings):
    model_config = SettingsConfigDict(env_file=".env", env_file_encoding="utf-8", extra="ignore",
                                      case_sensitive=False)

    slack_bot_token: SecretStr | None = None  # one workspace; without it, the OAuth install (many)
    slack_client_id: str | None = None
    slack_client_secret: SecretStr | None = None
    # where Slack sends the installer back (must be one of the app's Redirect URLs); unset: the app's first
    threadfork_install_redirect_url: str | None = None
    slack_signing_secret: SecretStr | None = None
    slack_app_token: SecretStr | None = None
    slack_api_url: str = "https://slack.com/api/"
    anthropic_api_key: SecretStr
    anthropic_base_url: str | None = None
    threadfork_model: Annotated[str, ChannelDefault("model")] = "claude-sonnet-5-5"
    threadfork_models: Names = ()  # the models a channel's admins may choose; empty: THREADFORK_MODEL only
    threadfork_admins: Names = ()  # user ids who may change any channel's settings, beside workspace admins
    threadfork_allowed_channels: Names = ()  # channel ids where Threadfork answers; empty: every channel
    threadfork_allowed_users: Names = ()  # user ids it answers; empty: everyone
    # thinking and text share it (models that think by default): room for an answer after the thinking
    threadfork_max_tokens: int = Field(32_000, gt=0)
    # output_config.effort for every channel that chose none: low, medium, high, or default (the API's own)
    threadfork_effort: Annotated[Literal["default", "low", "medium", "high"], ChannelDefault("effort")] = "default"
    threadfork_workers: int = Field(256, gt=0)
    threadfork_processes: int = Field(1, gt=0, le=64)  # HTTP mode: worker processes sharing PORT
    # per workspace and process: how many times a second answers being written are shown anew, at most, when
    # many are written at once (bot/slack/paging.py)
    threadfork_stream_updates_per_second: float = Field(10.0, gt=0, le=1000)
    threadfork_context_window: int = Field(200_000, gt=0)
    threadfork_compact_at: int | None = Field(None, gt=0)  # default: 80 % of the context window
    threadfork_fork_token_budget: Annotated[int | None, ChannelDefault("fork_token_budget"),
                                            Field(gt=0, le=MAX_BUDGET)] = None
    threadfork_merge_policy: Annotated[Literal["anyone", "owner"], ChannelDefault("merge_policy")] = "anyone"
    threadfork_max_fork_depth: int = Field(3, ge=1, le=10)
    # on: a merge posts a draft summary to approve, edit or redraft first
    threadfork_merge_review: Annotated[bool, ChannelDefault("merge_review")] = False
    threadfork_sweep_interval: Seconds = 60.0
    threadfork_fork_idle_reminder: Annotated[Seconds, Field(le=MAX_DURATION), ChannelDefault("idle_reminder")] = \
        24 * 3600.0
    threadfork_fork_expiry: Annotated[Seconds, Field(le=MAX_DURATION), ChannelDefault("expiry")] = 7 * 86400.0
    threadfork_fork_expiry_policy: Literal["merge", "abandon"] = "merge"
    threadfork_retention: Seconds | None = None  # the sweep deletes turns and closed forks older; None: keep forever
    # a claim (reply, merge, delivery) outlives its holder's last heartbeat by this much; capped so that
    # work whose process died is taken over within a minute, however long a model call may take
    threadfork_lease: Seconds = 30.0
    threadfork_drain_timeout: Seconds = 25.0  # on SIGTERM, how long replies in flight may take to finish
    threadfork_model_timeout: Seconds = 600.0
    threadfork_max_file_bytes: Bytes = 32 * 1024 * 1024  # one shared file; the API's own limits apply too
    threadfork_tools: Annotated[ToolNames, ChannelDefault("tools")] = ()  # Claude's server tools: web_search, web_fetch
    threadfork_tool_max_uses: int = Field(5, gt=0, le=50)  # per request, per tool
    threadfork_connectors: Connectors = ()  # every channel's default MCP connectors
    threadfork_secret_key: SecretStr | None = None  # Fernet key sealing connectors' tokens in the database
    threadfork_cache_ttl: CacheMode = CacheMode.AUTO  # prompt-cache TTLs: auto (by each session's pace), 5m, 1h
    # channel memory (docs/memory.md): its token budget, who may write it, Claude's memory tool (off, ask, on)
    threadfork_memory_budget: Annotated[int, ChannelDefault("memory_budget"), Field(ge=0, le=MAX_BUDGET)] = 2_000
    threadfork_memory_writers: Annotated[Literal["anyone", "admins"], ChannelDefault("memory_writers")] = "anyone"
    threadfork_memory_tool: Annotated[Literal["off", "ask", "on"], ChannelDefault("memory_tool")] = "off"
    # every channel's monthly cap on estimated spend, in USD; unset: no cap
    threadfork_monthly_spend_cap_usd: Annotated[float | None, ChannelDefault("monthly_spend_cap_usd"),
                                                Field(gt=0, le=1_000_000)] = None

    @field_validator("threadfork_secret_key")
    @classmethod
    def _secret_key_is_a_fernet_key(cls, key: SecretStr | None) -> SecretStr | None:
        if key is not None:
            check_key(key.get_secret_value())
        return key
    threadfork_retention_after_uninstall: SecondsOrNow = 30 * 86400.0  # a departed workspace's conversations
    database_url: str = DEFAULT_DATABASE_URL
    port: int = Field(3000, ge=0, le=65535)
    host: str = "0.0.0.0"
    log_level: str = "INFO"
    log_format: Literal["text", "json"] = "text"  # json: one JSON object a line (bot/infrastructure/logs.py)
    # Socket Mode: the port of /healthz and /metrics (HTTP mode serves them on PORT); unset: none
    threadfork_health_port: int | None = Field(None, ge=1, le=65535)

    @field_validator("log_level")
    @classmethod
    def _a_log_level(cls, level: str) -> str:
        if level.upper() not in LOG_LEVELS:
            raise ValueError(f"not a log level; choose from {', '.join(LOG_LEVELS)}")
        return level.upper()

    @field_validator("database_url")
    @classmethod
    def _a_database_url(cls, url: str) -> str:
        from sqlalchemy.engine import make_url  # imported here: settings load before the store is needed
        from sqlalchemy.exc import ArgumentError

        try:
            backend = make_url(url).get_backend_name()
        except ArgumentError:
            raise ValueError("not a database URL: sqlite:///path/to/file.db or postgresql+psycopg://user@host/db") \
                from None
        if backend not in DATABASES:
            raise ValueError(f"{backend} is not supported: use sqlite:///… or postgresql+psycopg://…")
        return url

    @model_validator(mode="wrap")
    @classmethod
    def _every_problem_at_once(cls, values, handler):
        """A field's error stops pydantic before the rules between fields run: run them on the raw values
        too, so one run names every problem."""
        try:
            return handler(values)
        except ValidationError as error:
            raw = values if isinstance(values, dict) else {}
            extra = _pairing_problems(**{name: raw.get(name) for name in _PAIRED})
            if not extra or not all(item["loc"] for item in error.errors()):
                raise  # nothing more to say, or it is the rules' own error (they ran)
            raise ValueError("\n".join([*_problems(error), *extra])) from None

    @model_validator(mode="after")
    def _tokens_fit_the_mode(self) -> Settings:
        problems = _pairing_problems(**{name: getattr(self, name) for name in _PAIRED})
        if problems:
            raise ValueError("\n".join(problems))
        return self

    def channel_defaults(self) -> ChannelSettings:
        """Every channel's settings where its admins chose nothing: the settings marked ChannelDefault
        (a channel is on, and has no instructions, unless its admins say otherwise)."""
        values = {mark.name: getattr(self, name) for name, field in type(self).model_fields.items()
                  for mark in field.metadata if isinstance(mark, ChannelDefault)}
        values["fork_token_budget"] = values["fork_token_budget"] or 0  # unset: no budget, as a channel's 0 says
        values["monthly_spend_cap_usd"] = values["monthly_spend_cap_usd"] or 0.0  # unset: no cap
        return ChannelSettings(instructions=None, enabled=True, **values)

    @property
    def model_choices(self) -> tuple[str, ...]:
        """The models a channel may choose, THREADFORK_MODEL first."""
        return tuple(dict.fromkeys((self.threadfork_model, *self.threadfork_models)))

    @property
    def claim_ttl(self) -> float:
        return min(self.threadfork_lease, MAX_CLAIM_TTL)

    @property
    def compact_at(self) -> int:
        return self.threadfork_compact_at or int(self.threadfork_context_window * 0.8)

    @property
    def many_workspaces(self) -> bool:
        """OAuth mode: no bot token of its own; every workspace's comes from its installation."""
        return self.slack_bot_token is None

    @property
    def socket_mode(self) -> bool:
        return self.slack_app_token is not None


_PAIRED = ("slack_bot_token", "slack_client_id", "slack_client_secret", "slack_app_token", "slack_signing_secret")


def _pairing_problems(slack_bot_token, slack_client_id, slack_client_secret, slack_app_token,
                      slack_signing_secret) -> list[str]:
    """The rules between the Slack settings: which token goes with which mode."""
    problems = []
    if slack_bot_token is None:
        if slack_client_id is None or slack_client_secret is None:
            problems.append("missing required setting SLACK_BOT_TOKEN (one workspace), or SLACK_CLIENT_ID and "
                            "SLACK_CLIENT_SECRET (installing into many workspaces)")
        elif slack_app_token is not None:
            problems.append("installing into many workspaces needs HTTP mode (Slack sends installers to "
                            "/slack/install): unset SLACK_APP_TOKEN, or set SLACK_BOT_TOKEN for one workspace")
    if slack_app_token is None and slack_signing_secret is None:
        problems.append("SLACK_SIGNING_SECRET is required in HTTP mode (set SLACK_APP_TOKEN for Socket Mode)")
    return problems


def load_settings(**overrides) -> Settings:
    try:
        return Settings(**overrides)
    except ValidationError as error:
        raise ConfigError(_problems(error)) from None


def _problems(error: ValidationError) -> list[str]:
    problems = []
    for item in error.errors():
        name = "_".join(str(part) for part in item["loc"]).upper()
        if item["type"] == "missing":
            problems.append(f"missing required setting {name}")
        elif name:
            problems.append(f"invalid setting {name}: {item['msg'].removeprefix('Value error, ')}")
        else:
            problems.extend(item["msg"].removeprefix("Value error, ").splitlines())
    return problems
