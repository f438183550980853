"""The runtime contract, on the real `python -m bot` process and on the HTTP endpoint."""
import json
import os
import re
import signal
import socket
import subprocess
import sys
import time
import urllib.parse
import urllib.request
from pathlib import Path

import pytest
from sqlalchemy import create_engine

from ..harness import API_KEY, BOT_TOKEN, CHANNEL, SIGNING_SECRET, at_rest, sign, wait_until
from ..processes import BotProcess, clean_env, free_port, worker_pids

LOG_LINE = re.compile(r"\d{4}-\d\d-\d\d \d\d:\d\d:\d\d,\d{3} (DEBUG|INFO|WARNING|ERROR|CRITICAL) [\w.]+: ")


def test_a_missing_secret_stops_start_up_naming_the_variable(tmp_path):
    env = clean_env(SLACK_SIGNING_SECRET=SIGNING_SECRET, ANTHROPIC_API_KEY=API_KEY)
    done = subprocess.run([sys.executable, "-m", "bot"], cwd=tmp_path, env=env, capture_output=True, text=True,
                          timeout=60)
    assert done.returncode != 0
    assert "SLACK_BOT_TOKEN" in done.stderr and "Traceback" not in done.stderr
    assert API_KEY not in done.stderr + done.stdout


def test_http_mode_needs_the_signing_secret(tmp_path):
    env = clean_env(SLACK_BOT_TOKEN=BOT_TOKEN, ANTHROPIC_API_KEY=API_KEY)
    done = subprocess.run([sys.executable, "-m", "bot"], cwd=tmp_path, env=env, capture_output=True, text=True,
                          timeout=60)
    assert done.returncode != 0 and "SLACK_SIGNING_SECRET" in done.stderr


@pytest.mark.parametrize("models", [{"THREADFORK_MODEL": "claude-nonexistent-1"},
                                    {"THREADFORK_MODELS": "claude-haiku-4-5,claude-nonexistent-1"}])
def test_a_model_anthropic_does_not_know_stops_start_up_naming_it(tmp_path, slack, claude, models):
    env = clean_env(SLACK_BOT_TOKEN=BOT_TOKEN, SLACK_SIGNING_SECRET=SIGNING_SECRET, ANTHROPIC_API_KEY=API_KEY,
                    SLACK_API_URL=slack.api_url, ANTHROPIC_BASE_URL=claude.url, PORT=str(free_port()), **models)
    done = subprocess.run([sys.executable, "-m", "bot"], cwd=tmp_path, env=env, capture_output=True, text=True,
                          timeout=60)
    assert done.returncode == 2
    assert "Threadfork cannot start" in done.stderr and "claude-nonexistent-1" in done.stderr
    assert "Traceback" not in done.stderr and API_KEY not in done.stderr
    assert not slack.calls and not claude.requests  # checked before anything else was done
    assert [r for r in claude.rejections if "claude-nonexistent-1" in r]
    claude.rejections.clear()  # the 404 the test asked for


def test_bad_slack_auth_fails_start_up_clearly(tmp_path, slack, claude):
    slack.fail("auth.test", "invalid_auth")
    env = clean_env(SLACK_BOT_TOKEN=BOT_TOKEN, SLACK_SIGNING_SECRET=SIGNING_SECRET, ANTHROPIC_API_KEY=API_KEY,
                    SLACK_API_URL=slack.api_url, ANTHROPIC_BASE_URL=claude.url, PORT=str(free_port()))
    done = subprocess.run([sys.executable, "-m", "bot"], cwd=tmp_path, env=env, capture_output=True, text=True,
                          timeout=60)
    assert done.returncode == 3  # as with several processes: gunicorn's "worker failed to boot"
    assert "Threadfork cannot start: Slack auth.test failed: invalid_auth" in done.stderr
    assert "Traceback" not in done.stderr and BOT_TOKEN not in done.stderr


def test_python_m_bot_serves_http_on_an_empty_database_and_answers_a_signed_mention(tmp_path, slack, claude):
    # settings split between a .env file and the environment; the environment wins
    (tmp_path / ".env").write_text(
        f"ANTHROPIC_API_KEY={API_KEY}\nANTHROPIC_BASE_URL={claude.url}\nTHREADFORK_MODEL=model-from-dotenv\n")
    port = free_port()
    env = clean_env(SLACK_BOT_TOKEN=BOT_TOKEN, SLACK_SIGNING_SECRET=SIGNING_SECRET, SLACK_API_URL=slack.api_url,
                    THREADFORK_MODEL="claude-test-model-from-env", PORT=str(port))
    bot = BotProcess(tmp_path, env=env)
    try:
        wait_until(bot.healthy, timeout=60, interval=0.1, message="/healthz")
        # the start-up's own work, as the kernel counts it (~4.5 s here, wall time alike on an idle machine); wall
        # time under four test processes on two cores measured the machine's load (22 s once), not the bot
        assert bot.cpu() < 10
        assert (tmp_path / "data" / "threadfork.db").exists()
        event = {"type": "app_mention", "channel": CHANNEL, "user": "UALICE01", "text": "<@UBOT0001> hello",
                 "ts": "1700000001.000100", "event_ts": "1700000001.000100"}
        body = json.dumps({"type": "event_callback", "event_id": "EvPROC0001", "team_id": "T0TEAM001",
                           "api_app_id": "A0THREADFORK", "event": event, "event_time": int(time.time())}).encode()
        request = urllib.request.Request(f"http://127.0.0.1:{port}/slack/events", data=body, method="POST",
                                         headers={"Content-Type": "application/json", **sign(body)})
        with urllib.request.urlopen(request, timeout=5) as response:
            assert response.status == 200
        wait_until(lambda: slack.posts(CHANNEL), timeout=15)
        assert claude.requests[0]["model"] == "claude-test-model-from-env"
        assert huge_body_declared(port) == 413  # gunicorn's server, as Slack reaches it in production
    finally:
        output = bot.stop()
    assert bot.proc.returncode == 0  # SIGTERM stops gunicorn's master and its worker cleanly
    for secret in (BOT_TOKEN, SIGNING_SECRET, API_KEY):
        assert secret not in output
    # one format for the bot's lines and gunicorn's; no access log, no request body
    assert "Booting worker" in output
    assert all(LOG_LINE.match(line) for line in output.splitlines() if line), output
    assert "/slack/events" not in output and "hello" not in output


@pytest.mark.skipif(not hasattr(os, "fork") or not os.path.exists("/proc/self/task"), reason="needs fork and /proc")
def test_with_several_processes_every_mention_is_answered_once_and_a_dead_worker_is_replaced(
        tmp_path, slack, claude, migrated_url):
    bot = BotProcess(tmp_path, slack, claude, migrated_url, threadfork_processes=2, log_level="WARNING")
    try:
        wait_until(bot.healthy, timeout=60, interval=0.1, message="/healthz")
        first = wait_until(lambda: len(worker_pids(bot.proc.pid)) == 2 and worker_pids(bot.proc.pid), timeout=30)
        channels = [f"CPROC{n:04d}" for n in range(12)]  # one session each, so no two are batched
        for n, channel in enumerate(channels):
            ts = f"1700000{n:03d}.000100"
            assert bot.event({"type": "app_mention", "channel": channel, "user": "UALICE01",
                              "text": f"<@UBOT0001> question {n}", "ts": ts, "event_ts": ts}, f"EvMP{n:04d}") == 200
        wait_until(lambda: all(slack.posts(c) for c in channels), timeout=60)
        engine = create_engine(migrated_url)
        try:  # each mention kept in the inbox is done: no answer of it is still to come
            wait_until(lambda: at_rest(engine), timeout=30, message="every mention to be done")
        finally:
            engine.dispose()
        assert [len(slack.posts(c)) for c in channels] == [1] * 12  # each answered once
        assert len(claude.requests) == 12

        victim = sorted(first)[0]
        os.kill(victim, signal.SIGKILL)
        wait_until(lambda: len(worker_pids(bot.proc.pid)) == 2 and victim not in worker_pids(bot.proc.pid), timeout=30)
        wait_until(bot.healthy, timeout=30, interval=0.1, message="/healthz after a worker died")
    finally:
        workers = worker_pids(bot.proc.pid) if bot.proc.poll() is None else set()
        bot.proc.terminate()
        # SIGTERM stops gunicorn's master and its workers, cleanly, within gunicorn's graceful timeout
        # (drain + 5 s): the replacement worker may still be booting on a loaded machine
        assert bot.proc.wait(timeout=45) == 0
    assert not [pid for pid in workers if os.path.exists(f"/proc/{pid}") and
                "zombie" not in open(f"/proc/{pid}/status").read().lower()]
    output = bot.log.read_text()
    assert f"Worker (pid:{victim}) was sent SIGKILL" in output  # gunicorn's error, at LOG_LEVEL=WARNING …
    assert "Booting worker" not in output  # … and its INFO lines are not
    assert all(LOG_LINE.match(line) for line in output.splitlines() if line), output


@pytest.mark.skipif(not hasattr(os, "fork") or not os.path.exists("/proc/self/task"), reason="needs fork and /proc")
def test_ctrl_c_stops_the_master_and_its_workers_at_once(tmp_path, slack, claude, migrated_sqlite_url):
    for attempt in range(3):  # the signal reaching master and workers together used to hang a worker now and then
        bot = BotProcess(tmp_path, slack, claude, migrated_sqlite_url, own_group=True, threadfork_processes=2)
        try:
            bot.wait_healthy(timeout=60)
            workers = wait_until(lambda: len(worker_pids(bot.proc.pid)) == 2 and worker_pids(bot.proc.pid),
                                 timeout=30)
            os.killpg(bot.proc.pid, signal.SIGINT)  # what a terminal's Ctrl-C does
            assert bot.proc.wait(timeout=10) == 0, f"attempt {attempt}: {bot.log.read_text()}"
            assert not [pid for pid in workers if os.path.exists(f"/proc/{pid}") and
                        "zombie" not in open(f"/proc/{pid}/status").read().lower()]
        finally:
            bot.kill_group()


@pytest.mark.skipif(not hasattr(os, "fork") or not os.path.exists("/proc/self/task"), reason="needs fork and /proc")
def test_ctrl_c_while_the_workers_are_still_booting_stops_everything_cleanly(tmp_path, slack, claude,
                                                                            migrated_sqlite_url):
    booting = slack.hold("auth.test", every=True)  # each worker's start-up waits here until the signal is sent
    bot = BotProcess(tmp_path, slack, claude, migrated_sqlite_url, own_group=True, threadfork_processes=2)
    try:
        wait_until(lambda: len(worker_pids(bot.proc.pid)) == 2 and slack.calls_to("auth.test"), timeout=30)
        assert not bot.healthy()  # a worker is inside its start-up: the signal lands mid-boot
        os.killpg(bot.proc.pid, signal.SIGINT)
        booting.set()
        assert bot.proc.wait(timeout=30) == 0, bot.log.read_text()
        assert "failed to boot" not in bot.log.read_text()
    finally:
        bot.kill_group()


def test_with_several_processes_a_start_up_failure_stops_them_all(tmp_path, slack, claude):
    slack.fail("auth.test", "invalid_auth", times=10)
    env = clean_env(SLACK_BOT_TOKEN=BOT_TOKEN, SLACK_SIGNING_SECRET=SIGNING_SECRET, ANTHROPIC_API_KEY=API_KEY,
                    SLACK_API_URL=slack.api_url, ANTHROPIC_BASE_URL=claude.url, PORT=str(free_port()),
                    THREADFORK_PROCESSES="2")
    done = subprocess.run([sys.executable, "-m", "bot"], cwd=tmp_path, env=env, capture_output=True, text=True,
                          timeout=60)
    assert done.returncode == 3 and "invalid_auth" in done.stderr


@pytest.mark.parametrize("headers", [
    {},
    {"X-Slack-Request-Timestamp": str(int(time.time())), "X-Slack-Signature": "v0=" + "0" * 64},
    "stale",
    "wrong-secret",
])
def test_requests_without_a_valid_signature_are_rejected_and_change_nothing(bot, slack, claude, headers):
    body = json.dumps({"type": "event_callback", "event_id": "EvFORGED01", "team_id": "T0TEAM001",
                       "event": {"type": "app_mention", "channel": CHANNEL, "user": "UEVE0001",
                                 "text": "<@UBOT0001> hi", "ts": "1.2"}}).encode()
    if headers == "stale":
        headers = sign(body, timestamp=int(time.time()) - 6 * 60)
    elif headers == "wrong-secret":
        headers = sign(body, secret="not-the-secret")
    reply = bot.post(body, "application/json", headers=headers, signed=False)
    assert reply.status == 401
    bot.settled()
    assert claude.requests == [] and slack.posts() == []
    assert bot.store.claims.claim("event:EvFORGED01") is True  # the forged id was never recorded
    assert bot.store.inbox.keep("event:EvFORGED01", "{}", 30) is True  # nor kept


FORGED_LINE = "\n2026-12-01 00:00:00,000 ERROR bot: forged line"
HOSTILE_BODIES = {
    "valid JSON": (json.dumps({"type": "event_callback", "event": {"type": "app_mention", "text": FORGED_LINE}}),
                   "application/json"),
    "broken JSON": ('{"type": "event_callback", ' + FORGED_LINE, "application/json"),
    "a form": ("command=%2Ffork&text=" + urllib.parse.quote(FORGED_LINE), "application/x-www-form-urlencoded"),
    "5 MB": ("x" * 5_000_000 + FORGED_LINE, "application/json"),
    "not UTF-8": ("\udcff\udcfe" + FORGED_LINE, "application/json"),
}


def status_before_the_body(port: int, length: int, headers: dict | None = None) -> int:
    """The status of a POST to /slack/events declaring `length` bytes whose body never comes, read within a
    second (a body over the limit is refused before it is read, so a client sending it would meet a closed
    connection)."""
    lines = [b"POST /slack/events HTTP/1.1", b"Host: 127.0.0.1", b"Content-Type: application/json",
             f"Content-Length: {length}".encode(), *(f"{k}: {v}".encode() for k, v in (headers or {}).items())]
    with socket.create_connection(("127.0.0.1", port), timeout=1.0) as sock:
        started = time.monotonic()
        sock.sendall(b"\r\n".join(lines) + b"\r\n\r\n")
        head = b""
        while b"\r\n" not in head:
            piece = sock.recv(1024)  # a timeout (1 s) fails the test
            assert piece, "the connection closed without an answer"
            head += piece
        assert time.monotonic() - started < 1.0
    return int(head.split(b" ", 2)[1])


def huge_body_declared(port: int) -> int:
    """An unsigned POST declaring 200 MB."""
    return status_before_the_body(port, 200_000_000)


def test_an_unsigned_post_declaring_200_mb_is_refused_413_within_a_second_without_its_body(bot, slack, claude,
                                                                                           caplog):
    caplog.set_level("DEBUG")
    assert huge_body_declared(bot.server.server_port) == 413
    assert bot.get("/healthz").status == 200  # no request thread left holding it
    assert all(len(r.getMessage()) <= 200 for r in caplog.records)
    bot.settled()
    assert claude.requests == [] and slack.calls_to("chat.postMessage") == []


def test_a_chunked_body_that_turns_out_over_the_limit_is_refused_413_having_read_no_more_than_the_limit(bot, claude):
    """No Content-Length (a chunked body, which gunicorn ends for the app: `wsgi.input_terminated`)."""
    import io

    body = io.BytesIO(b"x" * 3_000_000)
    statuses = []
    bot.server.get_app()({"REQUEST_METHOD": "POST", "PATH_INFO": "/slack/events", "wsgi.input": body,
                          "wsgi.input_terminated": True, "CONTENT_TYPE": "application/json"},
                         lambda status, headers: statuses.append(status))
    assert statuses == ["413 Request Entity Too Large"] and body.tell() <= 1_000_001
    assert claude.requests == []


@pytest.mark.parametrize("kind", HOSTILE_BODIES)
def test_an_unauthenticated_body_of_any_shape_or_size_is_refused_with_one_short_log_line(bot, slack, claude, kind,
                                                                                         caplog):
    text, content_type = HOSTILE_BODIES[kind]
    body = text.encode("utf-8", errors="surrogateescape")
    caplog.set_level("DEBUG")
    caplog.clear()
    forged = {"X-Slack-Request-Timestamp": str(int(time.time())), "X-Slack-Signature": "v0=" + "1" * 64}
    if len(body) > 1_000_000:  # over the limit: refused before it is read
        assert status_before_the_body(bot.server.server_port, len(body), forged) == 413
    else:
        assert bot.post(body, content_type, headers=forged, signed=False).status == 401
    logged = "\n".join(f"{r.levelname} {r.name}: {r.getMessage()}" for r in caplog.records)
    assert len(logged.encode()) <= 300 and "forged line" not in logged and "Traceback" not in logged, logged
    bot.settled()
    assert claude.requests == [] and slack.calls_to("chat.postMessage") == []


def test_every_event_delivery_is_acknowledged_even_unknown_ones(bot, slack, claude):
    for event in ({"type": "team_join", "user": {"id": "UNEW"}}, {"type": "channel_rename", "channel": {}},
                  {"type": "reaction_removed", "user": "U1", "reaction": "x", "item": {"type": "message"}},
                  {"type": "message", "subtype": "channel_join", "channel": CHANNEL, "user": "U1", "ts": "2.1"}):
        assert bot.event(event).status == 200
    bot.settled()
    assert claude.requests == []


def test_healthz_reports_the_store(bot):
    reply = bot.get("/healthz")
    assert reply.status == 200 and json.loads(reply.body) == {"ok": True, "store": "writable"}


def test_other_paths_and_methods_are_not_found(bot):
    assert bot.get("/").status == 404
    assert bot.get("/slack/events").status == 404


def test_a_body_over_the_size_limit_is_refused_and_changes_nothing(bot, slack, claude):
    event = {"type": "app_mention", "channel": CHANNEL, "user": "UALICE01", "ts": "1.3",
             "text": "<@UBOT0001> " + "x" * 1_000_000}
    body = json.dumps({"type": "event_callback", "event_id": "EvHUGE0001", "team_id": "T0TEAM001",
                       "event": event}).encode()
    assert status_before_the_body(bot.server.server_port, len(body), sign(body)) == 413  # signed, yet never read
    bot.settled()
    assert claude.requests == [] and slack.posts() == []


@pytest.mark.parametrize("body, content_type", [
    (b"{not json", "application/json"),
    (b"[1, 2]", "application/json"),
    (b'{"type": "event_callback"}', "application/json"),
    (b'{"type": "event_callback", "event": "nope", "event_id": "Ev1"}', "application/json"),
    (b"payload=%7Bbroken", "application/x-www-form-urlencoded"),
    (b"just=some&form=fields", "application/x-www-form-urlencoded"),
    (b"", "application/json"),
])
def test_a_validly_signed_malformed_body_gets_a_4xx_and_the_process_goes_on(bot, slack, claude, body, content_type):
    reply = bot.post(body, content_type)
    assert 400 <= reply.status < 500
    assert bot.get("/healthz").status == 200
    bot.say("UALICE01", "still alive?", mention=True)
    wait_until(lambda: slack.posts(CHANNEL))


def test_unknown_actions_and_shortcuts_are_acknowledged_and_change_nothing(bot, slack, claude):
    assert bot.click("some_unknown_action", "x").status == 200
    bot.settled()
    assert claude.requests == [] and slack.posts() == []


def listening_ports(pid: int) -> set[int]:
    """The TCP ports a process listens on (Linux: its socket inodes in /proc/net/tcp and tcp6, state LISTEN)."""
    inodes = set()
    for fd in Path(f"/proc/{pid}/fd").iterdir():
        try:
            link = os.readlink(fd)
        except FileNotFoundError:  # closed meanwhile (the listing's own descriptor, for one)
            continue
        if link.startswith("socket:["):
            inodes.add(link[len("socket:["):-1])
    ports = set()
    for table in ("/proc/net/tcp", "/proc/net/tcp6"):
        for row in Path(table).read_text().splitlines()[1:]:
            fields = row.split()
            if fields[3] == "0A" and fields[9] in inodes:  # 0A: LISTEN
                ports.add(int(fields[1].rsplit(":", 1)[1], 16))
    return ports


def test_with_an_app_token_the_bot_opens_a_socket_mode_connection(tmp_path, slack, claude):
    env = clean_env(SLACK_BOT_TOKEN=BOT_TOKEN, SLACK_APP_TOKEN="xapp-test-app-token-not-real",
                    ANTHROPIC_API_KEY=API_KEY, SLACK_API_URL=slack.api_url, ANTHROPIC_BASE_URL=claude.url,
                    PORT=str(free_port()))
    bot = BotProcess(tmp_path, env=env)
    try:
        wait_until(lambda: slack.calls_to("apps.connections.open"), timeout=30)
        opened = slack.calls.index(slack.calls_to("apps.connections.open")[0])
        assert slack.tokens[opened] == "xapp-test-app-token-not-real"
        # no HTTP server in Socket Mode: the process listens on no TCP port (asking its PORT for /healthz could
        # reach another test's server that took the port once it was free again)
        assert listening_ports(bot.proc.pid) == set()
    finally:
        output = bot.stop()
    assert bot.proc.returncode == 0, output  # SIGTERM: the connection closed, drained, exit 0
    assert "drained" in output
    assert "xapp-test-app-token-not-real" not in output and BOT_TOKEN not in output
