"""`python -m bot`: Socket Mode when SLACK_APP_TOKEN is set, else HTTP on PORT."""
from __future__ import annotations

import gc
import logging
import sys

from .app import StartupError, build
from .config import ConfigError, load_settings


def main() -> int:
    try:
        settings = load_settings()
    except ConfigError as error:
        print(error, file=sys.stderr)
        return 2
    logging.basicConfig(level=settings.log_level.upper(),
                        format="%(asctime)s %(levelname)s %(name)s: %(message)s")
    try:
        wiring = build(settings)
    except StartupError as error:
        print(f"Threadfork cannot start: {error}", file=sys.stderr)
        return 3
    from .scheduler import start_scheduler

    start_scheduler(wiring.services, settings.threadfork_sweep_interval)
    # start-up leaves ~200K long-lived objects (libraries, models, schemas); a full collection
    # over them took ~140 ms, a pause in whichever turn it hit. Frozen, they are never scanned again.
    gc.collect()
    gc.freeze()
    if settings.socket_mode:
        from slack_bolt.adapter.socket_mode import SocketModeHandler

        logging.getLogger(__name__).info("starting in Socket Mode")
        SocketModeHandler(wiring.app, settings.slack_app_token.get_secret_value()).start()
        return 0
    from .http import make_server

    server = make_server(wiring, settings.host, settings.port)
    logging.getLogger(__name__).info("listening on %s:%s (POST /slack/events, GET /healthz)",
                                     settings.host, server.effective_port)
    server.run()
    return 0


if __name__ == "__main__":
    sys.exit(main())
