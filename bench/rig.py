"""One bot process (Threadfork's `python -m bot` or the baseline's `python -m bench.baseline`) in
HTTP mode, the fake Slack and fake Anthropic it talks to, and the signed requests Slack would send
it. Message timestamps are unique across every rig of a run."""
from __future__ import annotations

import itertools
import sys
import time
import urllib.parse
from pathlib import Path

from tests.fakes.anthropic_api import FakeAnthropic
from tests.fakes.slack_api import BOT_USER_ID, TEAM_ID, FakeSlack
from tests.harness import wait_until
from tests.processes import BotProcess

from .measure import cpu_seconds, pids

_ts = itertools.count(1)


def progress(text: str) -> None:
    print(f"\r\033[K{text}", end="", file=sys.stderr, flush=True)


class Rig:
    def __init__(self, slack: FakeSlack, claude: FakeAnthropic, tmp: Path, database_url: str, name: str,
                 module: str = "bot", processes: int = 1, **more):
        """`more`: further settings of the bot (lower-case names, as THREADFORK_CACHE_TTL → threadfork_cache_ttl)."""
        self.slack, self.claude, self.database_url = slack, claude, database_url
        settings = {"threadfork_sweep_interval": "1h", "threadfork_processes": processes} if module == "bot" else {}
        settings.update(more)
        self.bot = BotProcess(tmp, slack, claude, database_url, name=name, module=module, log_level="WARNING",
                              **settings)
        self.bot.wait_healthy(timeout=60)

    def stop(self) -> None:
        self.bot.stop()

    def cpu(self) -> float:
        """CPU seconds the bot's processes have used so far."""
        return cpu_seconds(pids(self.bot))

    @staticmethod
    def next_ts() -> str:
        n = next(_ts)
        return f"{1_750_000_000 + n}.{n:06d}"

    def send(self, event: dict) -> float:
        """Deliver an event signed as Slack signs it; when it was handed over."""
        request = self.bot.signed_event(event, f"EvB{event['ts']}")  # building and signing it is Slack's work
        started = time.monotonic()
        assert self.bot.send(request) == 200
        return started

    def mention(self, channel: str, text: str, thread_ts: str | None = None,
                files: list[dict] | None = None, ts: str | None = None) -> tuple[str, float]:
        """An @-mention at the channel's top level, or a plain message in a thread (with `files`, as
        the fake Slack's `share_file` describes them); `ts`: when it was written (default: the next ts)."""
        ts = ts or self.next_ts()
        event = {"type": "app_mention", "channel": channel, "user": "UBENCH01", "text": f"<@{BOT_USER_ID}> {text}",
                 "ts": ts, "event_ts": ts, "team": TEAM_ID}
        if thread_ts:
            event = {"type": "message", "channel": channel, "user": "UBENCH01", "text": text, "ts": ts,
                     "event_ts": ts, "team": TEAM_ID, "thread_ts": thread_ts, "channel_type": "channel"}
        if files:
            event["files"] = files
        return ts, self.send(event)

    def mention_in_thread(self, channel: str, text: str, thread_ts: str, ts: str | None = None) -> float:
        ts = ts or self.next_ts()
        return self.send({"type": "app_mention", "channel": channel, "user": "UBENCH01", "team": TEAM_ID,
                          "text": f"<@{BOT_USER_ID}> {text}", "ts": ts, "event_ts": ts, "thread_ts": thread_ts})

    def chatter_ack_ms(self, channel: str) -> float:
        """How long the bot takes to acknowledge a top-level message that is not for it."""
        ts = self.next_ts()
        chatter = {"type": "message", "channel": channel, "user": "UBENCH02", "text": "chatter", "ts": ts,
                   "event_ts": ts, "team": TEAM_ID, "channel_type": "channel"}
        request = self.bot.signed_event(chatter, f"EvA{ts}")
        started = time.monotonic()
        assert self.bot.send(request) == 200
        return (time.monotonic() - started) * 1000

    def slash(self, command: str, text: str, channel: str) -> tuple[float, float]:
        """Send a signed slash command; (when it was handed over, how long the ack took)."""
        form = {"command": command, "text": text, "user_id": "UBENCH01", "user_name": "bench", "channel_id": channel,
                "team_id": TEAM_ID, "response_url": self.slack.response_url("bench"),
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
