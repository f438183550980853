"""`python -m bot`: Socket Mode (bot/socket_mode.py) when SLACK_APP_TOKEN is set, else HTTP on HOST:PORT
under gunicorn (THREADFORK_PROCESSES worker processes). Exit codes: 2 for a bad setting (a model Anthropic's
Models API does not know included), 3 when the bot cannot start (bad Slack token, unusable database), 0 after
SIGTERM."""
from __future__ import annotations

import logging
import sys

from .config import LOG_FORMAT, ConfigError, load_settings

log = logging.getLogger(__name__)


def main() -> int:
    try:
        settings = load_settings()
    except ConfigError as error:
        print(error, file=sys.stderr)
        return 2
    logging.basicConfig(level=settings.log_level.upper(), format=LOG_FORMAT)
    from .llm.models import UnknownModels, check_models

    try:  # every configured model, once, before anything is served
        check_models(settings.anthropic_api_key.get_secret_value(), settings.anthropic_base_url,
                     settings.model_choices)
    except UnknownModels as error:
        print(f"Threadfork cannot start: {error}", file=sys.stderr)
        return 2
    if settings.socket_mode:
        from .runtime import start
        from .socket_mode import serve

        running = start(settings)  # exits 3, saying why, when it cannot start
        log.info("starting in Socket Mode")
        serve(running, settings.slack_app_token.get_secret_value())  # exits 0 after SIGTERM, drained
        return 0
    from .server import serve

    serve(settings)  # gunicorn's master exits the process itself, also in every worker it forks
    return 0


if __name__ == "__main__":
    sys.exit(main())
