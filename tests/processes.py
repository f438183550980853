"""Real `python -m bot` processes in HTTP mode, for replica and crash tests (and the bench, which
also starts its baseline bot, `python -m bench.baseline`, this way)."""
from __future__ import annotations

import json
import os
import random
import signal
import socket
import subprocess
import sys
import time
import urllib.error
import urllib.request
from pathlib import Path

from .harness import API_KEY, BOT_TOKEN, SIGNING_SECRET, sign

ROOT = Path(__file__).resolve().parents[1]


EPHEMERAL = Path("/proc/sys/net/ipv4/ip_local_port_range")
_pick = random.SystemRandom()  # never reseeded by a test: four test processes must not pick alike


def free_port() -> int:
    """A port free now for a bot to bind a moment later, below the kernel's ephemeral range: a port the kernel handed
    out for this (bind to 0) could meanwhile go to any outgoing connection — CI once saw the bot's bind refused."""
    low = int(EPHEMERAL.read_text().split()[0]) if EPHEMERAL.exists() else 32768
    for _ in range(200):
        port = _pick.randrange(max(1024, low - 10_000), low)
        with socket.socket() as s:
            try:
                s.bind(("0.0.0.0", port))  # as gunicorn binds it
            except OSError:
                continue
            return port
    raise RuntimeError("no free port below the ephemeral range")


def clean_env(**values) -> dict:
    env = {k: v for k, v in os.environ.items()
           if not k.startswith(("SLACK_", "ANTHROPIC_", "THREADFORK_", "DATABASE_URL", "PORT"))}
    env["PYTHONPATH"] = str(ROOT)
    env.update({k: str(v) for k, v in values.items()})
    return env


def bot_env(slack, claude, database_url: str, **settings) -> dict:
    """Every setting the bot needs to talk to the fakes, plus `settings` (lower-case names)."""
    return clean_env(SLACK_BOT_TOKEN=BOT_TOKEN, SLACK_SIGNING_SECRET=SIGNING_SECRET, ANTHROPIC_API_KEY=API_KEY,
                     SLACK_API_URL=slack.api_url, ANTHROPIC_BASE_URL=claude.url, DATABASE_URL=database_url,
                     PORT=free_port(), **{k.upper(): v for k, v in settings.items()})


def worker_pids(pid: int) -> set[int]:
    """The worker processes gunicorn's master (the `python -m bot` process) has forked (Linux /proc)."""
    children = Path(f"/proc/{pid}/task/{pid}/children")
    return {int(p) for p in children.read_text().split()} if children.exists() else set()


def cpu_seconds(processes: list[int]) -> float:
    """User + system CPU time of these processes so far, every thread included (also those that
    ended), to the nanosecond: each process's CPU-time clock, the id clock_getcpuclockid(3) gives."""
    return sum(time.clock_gettime(((~pid) << 3) | 2) for pid in processes)


class BotProcess:
    def __init__(self, workdir: Path, slack=None, claude=None, database_url: str = "", name: str = "bot",
                 env: dict | None = None, module: str = "bot", own_group: bool = False, **settings):
        """`python -m <module>` wired to the fakes, or, given `env`, started with exactly that environment;
        with `own_group`, in a process group of its own (as a terminal's job is)."""
        env = env or bot_env(slack, claude, database_url, **settings)
        self.port = int(env["PORT"])
        self.log = workdir / f"{name}.log"
        self.proc = subprocess.Popen([sys.executable, "-m", module], cwd=workdir, env=env,
                                     stdout=self.log.open("a"), stderr=subprocess.STDOUT,
                                     start_new_session=own_group)

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    def healthy(self) -> bool:
        try:
            with urllib.request.urlopen(self.url + "/healthz", timeout=1) as r:
                return r.status == 200
        except OSError:
            assert self.proc.poll() is None, self.log.read_text()
            return False

    def cpu(self) -> float:
        """CPU seconds this bot's processes (its master and the workers it forked) have used so far."""
        return cpu_seconds([self.proc.pid, *worker_pids(self.proc.pid)])

    def wait_healthy(self, timeout: float = 60) -> float:
        started = time.monotonic()
        while not self.healthy():
            assert time.monotonic() - started < timeout, "never became healthy"
            time.sleep(0.1)
        return time.monotonic() - started

    def post(self, body: bytes, content_type: str) -> int:
        return self.send(self.signed(body, content_type))

    def signed(self, body: bytes, content_type: str) -> urllib.request.Request:
        """A request to /slack/events signed as Slack signs it, ready to send."""
        return urllib.request.Request(self.url + "/slack/events", data=body, method="POST",
                                      headers={"Content-Type": content_type, **sign(body)})

    def send(self, request: urllib.request.Request) -> int:
        try:
            with urllib.request.urlopen(request, timeout=10) as response:
                return response.status
        except urllib.error.HTTPError as error:
            return error.code

    def event(self, event: dict, event_id: str) -> int:
        return self.send(self.signed_event(event, event_id))

    def signed_event(self, event: dict, event_id: str) -> urllib.request.Request:
        body = json.dumps({"type": "event_callback", "event_id": event_id, "team_id": "T0TEAM001",
                           "api_app_id": "A0THREADFORK", "event": event, "event_time": int(time.time())})
        return self.signed(body.encode(), "application/json")

    def kill(self) -> None:
        """kill -9 of the processes doing the work (gunicorn's workers) and of their master."""
        workers = worker_pids(self.proc.pid)
        for pid in workers:
            os.kill(pid, signal.SIGKILL)
        self.proc.send_signal(signal.SIGKILL)
        self.proc.wait(timeout=10)

    def kill_group(self) -> None:
        """kill -9 of the whole process group (started with `own_group`), if it is still running."""
        if self.proc.poll() is None:
            os.killpg(self.proc.pid, signal.SIGKILL)
            self.proc.wait()

    def stop(self) -> str:
        if self.proc.poll() is None:
            self.proc.terminate()
            try:
                self.proc.wait(timeout=10)
            except subprocess.TimeoutExpired:
                self.kill()
        return self.log.read_text()
