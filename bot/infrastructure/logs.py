"""How the bot logs: LOG_LEVEL, and LOG_FORMAT `text` (one line, `time LEVEL logger: message`) or `json`
(python-json-logger: one JSON object a line with `time`, `level`, `logger`, `message`, and `team` /
`channel` when the line is about a request from a workspace's channel).

Invariants:
- Lines name ids, counts and kinds, never people's words; no library logs a request URL at INFO (httpx
  names a shared file's URL, the file's name in it).
- A start is quiet: alembic says nothing below WARNING (the store logs one line of its own), Bolt's
  warning that the environment's SLACK_BOT_TOKEN goes unused beside the client it is given is dropped.
- The ids a line is about travel in a context variable (ABOUT) set for each request by Bolt middleware
  (bot/slack/listeners.py: about_request); the listener pool copies it to the listener's thread
  (bot/infrastructure/drain.py).
"""
from __future__ import annotations

import contextvars
import logging
import sys
import threading

from pythonjsonlogger.json import JsonFormatter

from ..config import LOG_FORMAT

QUIET = ("alembic", "httpx", "httpx2", "apscheduler")  # chatty at INFO: their WARNINGs still show
# the ids (team, channel) of the request a line is about: set per request by Bolt middleware (slack/listeners.py)
ABOUT: contextvars.ContextVar[dict] = contextvars.ContextVar("threadfork_about", default={})
_UNUSED_TOKEN = "As you gave `client` as well, `token` will be unused."


def formatter(log_format: str) -> logging.Formatter:
    if log_format == "json":
        return JsonFormatter("%(levelname)s %(name)s %(message)s", timestamp="time",
                             rename_fields={"levelname": "level", "name": "logger"}, json_ensure_ascii=False)
    return logging.Formatter(LOG_FORMAT)


def configure_logging(level: str, log_format: str) -> None:
    handler = logging.StreamHandler(sys.stderr)
    handler.setFormatter(formatter(log_format))
    handler.addFilter(_about)
    logging.basicConfig(level=level, handlers=[handler], force=True)
    for name in QUIET:
        logging.getLogger(name).setLevel(max(logging.WARNING, logging.getLogger().level))
    logging.getLogger("slack_bolt.App").addFilter(lambda record: record.getMessage() != _UNUSED_TOKEN)
    logging.captureWarnings(True)  # a library's warning is a line like any other (JSON too)
    threading.excepthook = _uncaught


def _uncaught(args: threading.ExceptHookArgs) -> None:
    """A thread's uncaught exception as a log line (its traceback inside it), not raw text on stderr."""
    if args.exc_type is not SystemExit:
        logging.getLogger("threadfork").error("uncaught in thread %s", getattr(args.thread, "name", "?"),
                                              exc_info=(args.exc_type, args.exc_value, args.exc_traceback))


def _about(record: logging.LogRecord) -> bool:
    """Adds the workspace and channel the line is about (as `team`, `channel`) where known."""
    for key, value in ABOUT.get().items():
        if not hasattr(record, key):
            setattr(record, key, value)
    return True
