"""`python -m bot`: Socket Mode when SLACK_APP_TOKEN is set, else HTTP on PORT (in
THREADFORK_PROCESSES worker processes when that is above 1)."""
from __future__ import annotations

import gc
import logging
import sys

from .app import StartupError, Wiring, build
from .config import ConfigError, Settings, load_settings
from .processes import STARTUP_FAILED, serve_forked

log = logging.getLogger(__name__)


def main() -> int:
    try:
        settings = load_settings()
    except ConfigError as error:
        print(error, file=sys.stderr)
        return 2
    logging.basicConfig(level=settings.log_level.upper(),
                        format="%(asctime)s %(levelname)s %(name)s: %(message)s")
    if not settings.socket_mode and settings.threadfork_processes > 1:
        # nothing is built before the fork: each worker opens its own connections and threads
        return serve_forked(settings.host, settings.port, settings.threadfork_processes,
                            lambda listener: serve_http(settings, listener))
    if settings.socket_mode:
        wiring = start(settings)
        if wiring is None:
            return STARTUP_FAILED
        from slack_bolt.adapter.socket_mode import SocketModeHandler

        log.info("starting in Socket Mode")
        SocketModeHandler(wiring.app, settings.slack_app_token.get_secret_value()).start()
        return 0
    return serve_http(settings)


def start(settings: Settings) -> Wiring | None:
    """Build the bot and start its sweep; None (after saying why) when it cannot start."""
    try:
        wiring = build(settings)
    except StartupError as error:
        print(f"Threadfork cannot start: {error}", file=sys.stderr)
        return None
    from .scheduler import start_scheduler

    start_scheduler(wiring.services, settings.threadfork_sweep_interval)
    # start-up leaves ~200K long-lived objects (libraries, models, schemas); a full collection
    # over them took ~140 ms, a pause in whichever turn it hit. Frozen, they are never scanned again.
    gc.collect()
    gc.freeze()
    return wiring


def serve_http(settings: Settings, listener=None) -> int:
    wiring = start(settings)
    if wiring is None:
        return STARTUP_FAILED
    from .http import make_server

    server = make_server(wiring, settings.host, settings.port, listener)
    log.info("listening on %s:%s (POST /slack/events, GET /healthz)", settings.host, server.effective_port)
    server.run()
    return 0


if __name__ == "__main__":
    sys.exit(main())
