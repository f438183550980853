"""Metrics, health and JSON logs, in both modes, on the real `python -m bot` process: HTTP mode under gunicorn
with two workers reporting together, and Socket Mode with its health port."""
import json
import re
import subprocess
import sys
import time
import urllib.error
import urllib.request

import pytest

from ..fakes.slack_api import APP_TOKEN
from ..fakes.socket_actor import SocketModeSlack
from ..fakes.socket_mode import serving
from ..harness import CHANNEL, wait_until
from ..processes import ROOT, BotProcess, clean_env, free_port, worker_pids

pytestmark = pytest.mark.timeout(180)

REQUIRED = ("threadfork_turns_total", "threadfork_model_tokens_total", "threadfork_slack_calls_total",
            "threadfork_ack_seconds_bucket")
WORDS = "ship the pricing page friday"
SAMPLE = re.compile(r"^(threadfork_\w+)(\{[^}]*\})? (\S+)$")


def get(url: str) -> tuple[int, str, str]:
    with urllib.request.urlopen(url, timeout=10) as response:
        return response.status, response.headers.get("Content-Type", ""), response.read().decode()


def samples(text: str, name: str) -> dict[str, float]:
    """{labels: value} of one metric's samples in an exposition."""
    found = {}
    for line in text.splitlines():
        match = SAMPLE.match(line)
        if match and match.group(1) == name:
            found[match.group(2) or ""] = float(match.group(3))
    return found


def check_exposition(url: str, answered: bool) -> str:
    status, content_type, text = get(url)
    assert status == 200 and content_type.startswith("text/plain")
    for name in REQUIRED:
        assert name in text
    lines = [line for line in text.splitlines() if line and not line.startswith("#")]
    assert all(line.startswith(("threadfork_", "python_", "process_")) for line in lines), lines
    # no person's id nor their words, in a label or anywhere else
    assert not [line for line in lines if re.search(r"\bU[A-Z0-9]{6,}", line) or "pricing" in line]
    if answered:
        assert sum(samples(text, "threadfork_turns_total").values()) >= 1
    return text


def docker_healthcheck(env: dict) -> int:
    """The Dockerfile's HEALTHCHECK command, run as the container would run it, with the container's environment
    (its Python: this one)."""
    text = (ROOT / "Dockerfile").read_text().replace("\\\n", " ")
    [line] = [line for line in text.splitlines() if line.startswith("HEALTHCHECK")]
    command = json.loads(line[line.index("CMD") + 3:].strip())
    assert command[0] == "python"
    return subprocess.run([sys.executable, *command[1:]], env=env, capture_output=True, timeout=30).returncode


def json_lines(output: str) -> list[dict]:
    lines = [line for line in output.splitlines() if line.strip()]
    assert lines
    parsed = []
    for line in lines:
        record = json.loads(line)  # every line one JSON object
        assert isinstance(record, dict) and "level" in record and ("message" in record or "msg" in record), line
        parsed.append(record)
    return parsed


def test_http_mode_serves_metrics_of_both_workers_and_logs_one_json_object_a_line(tmp_path, slack, claude,
                                                                                 migrated_sqlite_url):
    bot = BotProcess(tmp_path, slack, claude, migrated_sqlite_url, threadfork_processes=2, log_format="json")
    try:
        wait_until(bot.healthy, timeout=90, interval=0.2, message="/healthz")
        wait_until(lambda: len(worker_pids(bot.proc.pid)) == 2, timeout=30)
        auth_test = '{method="auth.test",outcome="ok"}'
        wait_until(lambda: samples(get(bot.url + "/metrics")[2], "threadfork_slack_calls_total").get(auth_test) == 2,
                   timeout=90, interval=0.5, message="both workers booted (each calls auth.test once)")
        assert docker_healthcheck(clean_env(PORT=bot.port)) == 0
        assert docker_healthcheck(clean_env(PORT=free_port())) != 0  # it does fail where nothing answers
        check_exposition(bot.url + "/metrics", answered=False)
        ts = "1700000001.000100"
        assert bot.event({"type": "app_mention", "channel": CHANNEL, "user": "UALICE01",
                          "text": f"<@UBOT0001> {WORDS}", "ts": ts, "event_ts": ts}, "EvMETRICS01") == 200
        wait_until(lambda: slack.posts(CHANNEL), timeout=30, message="the answer")
        wait_until(lambda: sum(samples(get(bot.url + "/metrics")[2], "threadfork_turns_total").values()) >= 1,
                   timeout=15, message="the turn counted")
        for _ in range(6):  # whichever worker answers the scrape, it reports both workers' counts
            text = check_exposition(bot.url + "/metrics", answered=True)
        assert samples(text, "threadfork_ack_seconds_count")['{transport="http"}'] >= 1
        assert samples(text, "threadfork_slack_calls_total")[auth_test] == 2  # summed over the workers
        assert samples(text, "threadfork_model_tokens_total")['{kind="output"}'] > 0
        assert samples(text, "threadfork_deliveries_total")['{state="kept"}'] >= 1
        assert samples(text, "threadfork_first_words_seconds_count")[""] >= 1
        assert samples(text, "threadfork_queue_depth") == {'{queue="turns"}': 0, '{queue="deliveries"}': 0}
    finally:
        output = bot.stop()
    records = json_lines(output)
    assert {r["logger"] for r in records} >= {"gunicorn.error", "bot.app"}
    assert all("time" in r for r in records)
    assert WORDS not in output and "Traceback" not in output
    assert not [r for r in records if r["logger"].startswith("alembic")]
    assert "token` will be unused" not in output


@pytest.fixture
def socket_mode(slack):
    yield from serving(slack)


def test_socket_mode_serves_healthz_and_metrics_on_its_health_port(tmp_path, slack, claude, socket_mode,
                                                                   migrated_sqlite_url):
    port = free_port()
    before = time.monotonic()
    bot = BotProcess(tmp_path, slack, claude, migrated_sqlite_url, slack_app_token=APP_TOKEN,
                     threadfork_health_port=port, log_format="json")
    try:
        socket_mode.wait_connected(after=before, timeout=90)
        health = f"http://127.0.0.1:{port}"
        status, content_type, body = get(health + "/healthz")
        assert status == 200 and json.loads(body) == {"ok": True, "store": "writable"}
        assert docker_healthcheck(clean_env(SLACK_APP_TOKEN=APP_TOKEN, THREADFORK_HEALTH_PORT=port,
                                            PORT=free_port())) == 0
        check_exposition(health + "/metrics", answered=False)
        SocketModeSlack(slack, socket_mode).say("UALICE01", WORDS, mention=True)
        wait_until(lambda: slack.posts(CHANNEL), timeout=30, message="the answer")
        wait_until(lambda: sum(samples(get(health + "/metrics")[2], "threadfork_turns_total").values()) >= 1,
                   timeout=15, message="the turn counted")
        text = check_exposition(health + "/metrics", answered=True)
        assert samples(text, "threadfork_ack_seconds_count")['{transport="socket_mode"}'] >= 1
        with pytest.raises(urllib.error.HTTPError) as missing:
            get(health + "/slack/events")
        assert missing.value.code == 404
    finally:
        output = bot.stop()
    assert bot.proc.returncode == 0, output
    json_lines(output)
    assert WORDS not in output and APP_TOKEN not in output
