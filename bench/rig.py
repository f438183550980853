"""One bot process (Threadfork's `python -m bot` or the baseline's `python -m bench.baseline`) in
HTTP mode, the fake Slack and fake Anthropic it talks to, and the signed requests Slack would send
it. Message timestamps are unique across every rig of a run.

The fake Slack rate-limits as Slack does, per workspace; `workspaces(n)` adds n more to spread a load over
(Threadfork installed in each by Slack's OAuth flow, the baseline given each one's token), and every event,
command or mention names the team it comes from (the default one unless told)."""
from __future__ import annotations

import itertools
from collections.abc import Iterator
from contextlib import contextmanager
import json
import sys
import time
import urllib.parse
from pathlib import Path

from sqlalchemy.engine import make_url

from tests.fakes.anthropic_api import FakeAnthropic
from tests.fakes.slack_api import CLIENT_ID, CLIENT_SECRET, TEAM_ID, FakeSlack, Team
from tests.fakes.slack_browser import install
from tests.harness import wait_until
from tests.processes import BotProcess, bot_env, cpu_seconds

from .database_cpu import DatabaseCpu
from .measure import pids

_ts = itertools.count(1)


def unlimited(slack: FakeSlack) -> FakeSlack:
    """The fake Slack without Slack's rate limits, for the figures that measure the bot itself with one channel
    answered back to back (Slack would throttle that channel's posts, and the figure would measure Retry-After).
    Figures 3, 4 and 12 are about load: they spread their answers over workspaces and run `limited`."""
    slack.rates.on = False
    return slack


@contextmanager
def limited(slack: FakeSlack) -> Iterator[None]:
    """Slack's rate limits on, as the fake enforces them per workspace, for a figure about load."""
    was, slack.rates.on = slack.rates.on, True
    try:
        yield
    finally:
        slack.rates.on = was


def progress(text: str) -> None:
    print(f"\r\033[K{text}", end="", file=sys.stderr, flush=True)


class Rig:
    def __init__(self, slack: FakeSlack, claude: FakeAnthropic, tmp: Path, database_url: str, name: str,
                 module: str = "bot", processes: int = 1, path: Path | None = None, install_default: bool = True,
                 **more):
        """`more`: further settings of the bot (lower-case names, as THREADFORK_CACHE_TTL → threadfork_cache_ttl);
        `path`: the checkout whose bot runs (default: this one); `install_default`: False for a replica of a bot
        whose database already holds the default workspace's installation."""
        self.slack, self.claude, self.database_url, self.module = slack, claude, database_url, module
        self.tokens = tmp / f"{name}-tokens.json"  # the baseline's tokens of the workspaces added
        self.tokens.write_text("{}")
        settings = {"threadfork_sweep_interval": "1h", "threadfork_processes": processes} if module == "bot" else {}
        settings.update(more)
        env = bot_env(slack, claude, database_url, log_level="WARNING", **settings)
        if path is not None:
            env["PYTHONPATH"] = str(path)
        if module == "bot":  # many workspaces: Slack's OAuth install, one per workspace
            del env["SLACK_BOT_TOKEN"]
            env.update(SLACK_CLIENT_ID=CLIENT_ID, SLACK_CLIENT_SECRET=CLIENT_SECRET)
        else:
            env["BASELINE_TOKENS"] = str(self.tokens)
        self.bot = BotProcess(tmp, name=name, module=module, env=env)
        try:
            self.bot.wait_healthy(timeout=180)  # a busy shared machine starts it slowly
        except AssertionError:
            self.bot.stop()
            raise
        self.default = slack.team(None)
        if module == "bot" and install_default:
            install(self.bot.url, slack, self.default)

    def workspaces(self, count: int) -> list[Team]:
        """`count` new workspaces the bot is installed in."""
        teams = [self.slack.add_team() for _ in range(count)]
        if self.module == "bot":
            for team in teams:
                install(self.bot.url, self.slack, team)
        else:
            known = json.loads(self.tokens.read_text())
            known.update({t.id: [t.bot_token, t.bot_user_id] for t in teams})
            self.tokens.write_text(json.dumps(known))
        return teams

    def stop(self) -> None:
        self.bot.stop()

    def database_cpu(self) -> DatabaseCpu | None:
        """What PostgreSQL's backends spend for this bot's database (None on SQLite, or a server elsewhere)."""
        url = make_url(self.database_url) if self.database_url else None
        if url is None or url.get_backend_name() != "postgresql":
            return None
        watch = DatabaseCpu(url.database)
        return watch if watch.available else None

    def cpu(self) -> float:
        """CPU seconds the bot's processes have used so far."""
        return cpu_seconds(pids(self.bot))

    @staticmethod
    def next_ts() -> str:
        n = next(_ts)
        return f"{1_750_000_000 + n}.{n:06d}"

    def signed_event(self, event: dict, event_id: str):
        team = event.get("team") or TEAM_ID
        body = json.dumps({"type": "event_callback", "event_id": event_id, "team_id": team, "api_app_id": "A0THREADFORK",
                           "event": event, "event_time": int(time.time()),
                           "authorizations": [{"team_id": team, "is_bot": True, "is_enterprise_install": False}]})
        return self.bot.signed(body.encode(), "application/json")

    def send(self, event: dict) -> float:
        """Deliver an event signed as Slack signs it; when it was handed over."""
        request = self.signed_event(event, f"EvB{event['ts']}")  # building and signing it is Slack's work
        started = time.monotonic()
        assert self.bot.send(request) == 200
        return started

    def mention(self, channel: str, text: str, thread_ts: str | None = None,
                files: list[dict] | None = None, ts: str | None = None, team: Team | None = None) -> tuple[str, float]:
        """An @-mention at the channel's top level, or a plain message in a thread (with `files`, as
        the fake Slack's `share_file` describes them); `ts`: when it was written (default: the next ts)."""
        ts, team = ts or self.next_ts(), team or self.default
        event = {"type": "app_mention", "channel": channel, "user": "UBENCH01", "text": f"<@{team.bot_user_id}> {text}",
                 "ts": ts, "event_ts": ts, "team": team.id}
        if thread_ts:
            event = {"type": "message", "channel": channel, "user": "UBENCH01", "text": text, "ts": ts,
                     "event_ts": ts, "team": team.id, "thread_ts": thread_ts, "channel_type": "channel"}
        if files:
            event["files"] = files
        return ts, self.send(event)

    def mention_in_thread(self, channel: str, text: str, thread_ts: str, ts: str | None = None,
                          team: Team | None = None) -> float:
        ts, team = ts or self.next_ts(), team or self.default
        return self.send({"type": "app_mention", "channel": channel, "user": "UBENCH01", "team": team.id,
                          "text": f"<@{team.bot_user_id}> {text}", "ts": ts, "event_ts": ts, "thread_ts": thread_ts})

    def chatter_ack_ms(self, channel: str, team: Team | None = None) -> float:
        """How long the bot takes to acknowledge a top-level message that is not for it."""
        ts = self.next_ts()
        chatter = {"type": "message", "channel": channel, "user": "UBENCH02", "text": "chatter", "ts": ts,
                   "event_ts": ts, "team": (team or self.default).id, "channel_type": "channel"}
        request = self.signed_event(chatter, f"EvA{ts}")
        started = time.monotonic()
        assert self.bot.send(request) == 200
        return (time.monotonic() - started) * 1000

    def slash(self, command: str, text: str, channel: str, team: Team | None = None) -> tuple[float, float]:
        """Send a signed slash command; (when it was handed over, how long the ack took)."""
        form = {"command": command, "text": text, "user_id": "UBENCH01", "user_name": "bench", "channel_id": channel,
                "team_id": (team or self.default).id, "response_url": self.slack.response_url("bench"),
                "trigger_id": f"{next(_ts)}.trigger",  # each command its own: a repeated one is a replay
                "api_app_id": "A0BENCH", "token": "unused"}
        request = self.bot.signed(urllib.parse.urlencode(form).encode(), "application/x-www-form-urlencoded")
        started = time.monotonic()
        assert self.bot.send(request) == 200
        return started, time.monotonic() - started

    def wait(self, predicate, timeout: float = 60.0, interval: float = 0.002):
        return wait_until(predicate, timeout=timeout, interval=interval, message="the bot to finish")

    def stops(self) -> int:
        """Streams closed in Slack so far (chat.stopStream calls)."""
        return self.slack.counts.get("chat.stopStream", 0)

    def roots(self, channel: str) -> list:
        """Fork roots posted at the channel's top level, oldest first."""
        return [m for m in self.slack.posts(channel, top_level=True) if m.get("text", "").startswith("Fork #")]
