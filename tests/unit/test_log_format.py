"""LOG_FORMAT=json: one JSON object a line with time, level, logger, message and the team and channel the
line is about (carried from Bolt's middleware to the listener's thread); chatty libraries kept below INFO."""
import json
import logging
import threading
from types import SimpleNamespace

import pytest

from bot.infrastructure.drain import DrainableExecutor
from bot.infrastructure.logs import QUIET, configure_logging
from bot.slack.listeners import about_request


class Captured:
    def __init__(self, capsys):
        self.capsys = capsys

    def getvalue(self) -> str:
        return self.capsys.readouterr().err


@pytest.fixture
def captured(capsys):
    """configure_logging changes the process's logging: put it back afterwards."""
    root, quiet = logging.getLogger(), {name: logging.getLogger(name).level for name in QUIET}
    saved = root.handlers[:], root.level, threading.excepthook, logging.getLogger("slack_bolt.App").filters[:]
    yield Captured(capsys)
    root.handlers[:], level, threading.excepthook, logging.getLogger("slack_bolt.App").filters[:] = saved
    root.setLevel(level)
    for name, was in quiet.items():
        logging.getLogger(name).setLevel(was)
    logging.captureWarnings(False)


def test_a_line_logged_by_a_listener_names_its_team_and_channel_as_json(captured):
    configure_logging("INFO", "json")
    executor = DrainableExecutor(max_workers=1)
    context = SimpleNamespace(team_id="T0TEAM001", channel_id="C0CHANNEL1")

    def listener():
        logging.getLogger("bot.test").info("answered in %s ms", 12)

    about_request(context, lambda: executor.submit(listener).result())
    logging.getLogger("bot.test").warning("outside any request")
    first, second = [json.loads(line) for line in captured.getvalue().splitlines()]
    assert {k: first[k] for k in ("level", "logger", "message", "team", "channel")} == {
        "level": "INFO", "logger": "bot.test", "message": "answered in 12 ms", "team": "T0TEAM001",
        "channel": "C0CHANNEL1"}
    assert first["time"].startswith("20") and "team" not in second and second["level"] == "WARNING"


def test_text_lines_keep_their_one_line_shape(captured):
    configure_logging("INFO", "text")
    logging.getLogger("bot.test").info("ready")
    assert captured.getvalue().rstrip().endswith(" INFO bot.test: ready")


def test_request_urls_and_migration_steps_stay_below_info(captured):
    configure_logging("INFO", "json")
    for name in ("httpx", "httpx2", "alembic"):
        logging.getLogger(name).info("HTTP Request: GET https://files.slack.com/files-pri/T1-F1/secret-plan.pdf")
    logging.getLogger("slack_bolt.App").warning("As you gave `client` as well, `token` will be unused.")
    assert captured.getvalue() == ""
