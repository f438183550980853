"""`python -m bot`: Socket Mode (bot/entrypoints/socket_mode.py) when SLACK_APP_TOKEN is set, else HTTP on HOST:PORT
under gunicorn (THREADFORK_PROCESSES worker processes). `python -m bot check`: the settings checked whole,
every problem named, nothing started. Exit codes: 2 for bad settings (every one named at once; a model
Anthropic's Models API does not know included), 3 when the bot cannot start (bad Slack token, unusable
database), 0 after SIGTERM. Either failure is one "Threadfork cannot start: …" line, never a traceback."""
from __future__ import annotations

import logging
import sys

from .config import ConfigError, Settings, load_settings
from .infrastructure.logs import configure_logging

log = logging.getLogger(__name__)

USAGE = "usage: python -m bot [check]"


def main(argv: list[str] | None = None) -> int:
    argv = sys.argv[1:] if argv is None else argv
    if argv not in ([], ["check"]):
        print(USAGE, file=sys.stderr)
        return 2
    try:
        settings = load_settings()
    except ConfigError as error:
        if argv:
            print("Threadfork's settings are not complete:", *(f"- {p}" for p in error.problems), sep="\n",
                  file=sys.stderr)
        else:
            print(error, file=sys.stderr)
        return 2
    if argv:
        print(f"Threadfork's settings are complete: {_mode(settings)}.")
        return 0
    configure_logging(settings.log_level, settings.log_format)
    from .llm.models import UnknownModels, check_models

    try:  # every configured model, once, before anything is served
        check_models(settings.anthropic_api_key.get_secret_value(), settings.anthropic_base_url,
                     settings.model_choices)
    except UnknownModels as error:
        print(f"Threadfork cannot start: {error}", file=sys.stderr)
        return 2
    if settings.socket_mode:
        from .entrypoints.runtime import start
        from .entrypoints.socket_mode import serve

        running = start(settings)  # exits 3, saying why, when it cannot start
        if settings.threadfork_health_port:
            _serve_health(running, settings.host, settings.threadfork_health_port)
        log.info("starting in Socket Mode")
        serve(running, settings.slack_app_token.get_secret_value())  # exits 0 after SIGTERM, drained
        return 0
    from .entrypoints.server import serve

    serve(settings)  # gunicorn's master exits the process itself, also in every worker it forks
    return 0


def _serve_health(running, host: str, port: int) -> None:
    """Socket Mode's /healthz and /metrics; a port that cannot be had stops the start (exit 3)."""
    from .entrypoints.health import serve_health
    from .entrypoints.runtime import STARTUP_FAILED

    try:
        serve_health(running.wiring, host, port)
    except OSError as error:
        print(f"Threadfork cannot start: THREADFORK_HEALTH_PORT {port}: {error.strerror or error}", file=sys.stderr,
              flush=True)
        raise SystemExit(STARTUP_FAILED) from None


def _mode(settings: Settings) -> str:
    if settings.socket_mode:
        health = settings.threadfork_health_port
        return "Socket Mode" + (f", /healthz and /metrics on port {health}" if health else "")
    return f"HTTP mode on {settings.host}:{settings.port}"


if __name__ == "__main__":
    sys.exit(main())
