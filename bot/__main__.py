"""`python -m bot`: Socket Mode when SLACK_APP_TOKEN is set, else HTTP on HOST:PORT under gunicorn
(THREADFORK_PROCESSES worker processes). Exit codes: 2 for a bad setting, 3 when the bot cannot
start (bad Slack token, unusable database), 0 after SIGTERM."""
from __future__ import annotations

import logging
import signal
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
    if settings.socket_mode:
        from slack_bolt.adapter.socket_mode import SocketModeHandler

        from .runtime import start, stop

        running = start(settings)  # exits 3, saying why, when it cannot start
        log.info("starting in Socket Mode")
        handler = SocketModeHandler(running.wiring.app, settings.slack_app_token.get_secret_value())

        def leave(signum, _frame):
            log.info("signal %s: closing the Socket Mode connection and draining", signum)
            handler.close()  # no new deliveries; Slack redelivers what it sends meanwhile to another connection
            stop(running)  # exits 0

        signal.signal(signal.SIGTERM, leave)
        signal.signal(signal.SIGINT, leave)
        handler.start()
        return 0
    from .server import serve

    serve(settings)  # gunicorn's master exits the process itself, also in every worker it forks
    return 0


if __name__ == "__main__":
    sys.exit(main())
