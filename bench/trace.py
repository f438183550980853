"""`python -m bench.trace`: the modules of the bot one mention runs through, from the signed POST to the
answer's last Slack call (issue 36's walk; docs/architecture.md's "Life of a message" follows it); with
--merge, a fork's ✅ instead, from the signed reaction to the merge's last Slack call.

The bot runs as it runs in HTTP mode (`python -m bot` under gunicorn, one worker) against the test suite's
fake Slack and fake Anthropic, inside bench/traced.py's profiler. One mention warms it up (imports, caches);
the next (or, with --merge, the ✅ on a fork opened then) is traced: every bot/ file a function of which was called between the moment its signed request is
sent and the moment the fake Slack received the answer's last call counts, except calls of the scheduler's
heartbeat (which renews claims every few seconds whatever the bot does). Prints the count and, with
--list, the files in the order they were first entered, each with the functions called in it.
"""
from __future__ import annotations

import argparse
import json
import tempfile
import time
import urllib.parse
from pathlib import Path

from sqlalchemy import create_engine

from tests.fakes.anthropic_api import FakeAnthropic
from tests.fakes.slack_api import FakeSlack
from tests.harness import answering, wait_until
from tests.processes import BotProcess, bot_env

ROOT = Path(__file__).resolve().parents[1]
NOT_THE_MESSAGE = ("services/catalog.py:heartbeat",)  # the scheduler's beat, on its own clock


def trace(merge: bool = False) -> dict:
    tmp = Path(tempfile.mkdtemp(prefix="threadfork-trace-"))
    slack, claude = FakeSlack().start(), FakeAnthropic().start()
    database_url = f"sqlite:///{tmp / 'trace.db'}"
    env = bot_env(slack, claude, database_url, log_level="WARNING", threadfork_sweep_interval="1h",
                  threadfork_processes=1)
    env["THREADFORK_TRACE_TO"] = str(tmp)
    bot = BotProcess(tmp, name="traced", module="bench.traced", env=env)
    db = create_engine(database_url)
    try:
        bot.wait_healthy(timeout=180)
        _mention(bot, slack, claude, db, "C0WARMUP01", "hello")
        if merge:
            root = _fork(bot, slack, claude, db, "C0TRACED01", "explore the options")
            started, ended = _delivered(bot, slack, claude, db, {
                "type": "reaction_added", "user": "UTRACE01", "reaction": "white_check_mark",
                "item": {"type": "message", "channel": "C0TRACED01", "ts": root}, "event_ts": f"{time.time():.6f}"})
        else:
            started, ended = _mention(bot, slack, claude, db, "C0TRACED01", "what is a fork?")
        time.sleep(0.5)  # the profiler's writer flushes every 50 ms
        events = [line.split("\t") for path in tmp.glob("trace-*.tsv") for line in path.read_text().splitlines()]
    finally:
        bot.stop()
        db.dispose()
        slack.stop()
        claude.stop()
    first: dict[str, tuple[float, str]] = {}
    called: dict[str, list[str]] = {}
    for path, name, at, root in sorted(events, key=lambda e: float(e[2])):
        if started <= float(at) <= ended and root not in NOT_THE_MESSAGE:
            first.setdefault(path, (float(at) - started, root))
            if name not in called.setdefault(path, []):
                called[path].append(name)
    modules = sorted(p.relative_to(ROOT / "bot").as_posix() for p in (ROOT / "bot").rglob("*.py"))
    return {"seconds": round(ended - started, 3), "entered": len(first), "modules": len(modules),
            "files": [{"file": f, "ms": round(at * 1000, 1), "root": root, "functions": called[f]}
                      for f, (at, root) in first.items()]}


def _mention(bot: BotProcess, slack: FakeSlack, claude: FakeAnthropic, db, channel: str, text: str):
    """A mention at the channel's top level; (when it was sent, when the fake Slack received the answer's last
    call)."""
    team, ts = slack.team(None), f"{time.time():.6f}"
    return _delivered(bot, slack, claude, db, {"type": "app_mention", "channel": channel, "user": "UTRACE01",
                                               "text": f"<@{team.bot_user_id}> {text}", "ts": ts, "event_ts": ts})


def _fork(bot: BotProcess, slack: FakeSlack, claude: FakeAnthropic, db, channel: str, topic: str) -> str:
    """`/fork <topic>` at the channel's top level, answered in its thread; the fork root's ts."""
    form = {"command": "/fork", "text": topic, "user_id": "UTRACE01", "user_name": "trace", "channel_id": channel,
            "team_id": slack.team(None).id, "response_url": slack.response_url("trace"),
            "trigger_id": f"{time.time():.6f}.trigger", "api_app_id": "A0TRACE", "token": "unused"}
    requests = len(claude.requests)
    assert bot.send(bot.signed(urllib.parse.urlencode(form).encode(), "application/x-www-form-urlencoded")) == 200
    wait_until(lambda: len(claude.requests) > requests, timeout=60, message="the topic's answer")
    wait_until(lambda: not answering(db), timeout=60, interval=0.05, message="the topic's answer")
    return next(m for m in slack.posts(channel, top_level=True) if m.get("text", "").startswith("Fork #")).ts


def _delivered(bot: BotProcess, slack: FakeSlack, claude: FakeAnthropic, db, event: dict):
    """An event signed as Slack signs it; (when it was sent, when the fake Slack received the last call of
    the model exchange it makes)."""
    team = slack.team(None)
    event = {**event, "team": team.id}
    body = json.dumps({"type": "event_callback", "event_id": f"EvT{time.time():.6f}", "team_id": team.id,
                       "api_app_id": "A0TRACE", "event": event, "event_time": int(time.time()),
                       "authorizations": [{"team_id": team.id, "is_bot": True, "is_enterprise_install": False}]})
    request = bot.signed(body.encode(), "application/json")
    requests, calls = len(claude.requests), len(slack.calls)
    started = time.monotonic()
    assert bot.send(request) == 200
    wait_until(lambda: len(claude.requests) > requests, timeout=60, message="the model request")
    wait_until(lambda: not answering(db), timeout=60, interval=0.05, message="the answer")
    time.sleep(1.0)  # what follows the answer off its path (a reaction, a status) has its time
    return started, max(c.at for c in slack.calls[calls:])


def main() -> None:
    parser = argparse.ArgumentParser(prog="python -m bench.trace", description=__doc__.splitlines()[0])
    parser.add_argument("--merge", action="store_true", help="trace a fork's ✅ instead of a mention")
    parser.add_argument("--list", action="store_true", help="name each file entered, in order")
    parser.add_argument("--json", type=Path, help="write the result there too")
    args = parser.parse_args()
    result = trace(args.merge)
    print(f"{'a fork’s ✅' if args.merge else 'one mention'}, signed POST → last Slack call ({result['seconds']} s): "
          f"{result['entered']} of the bot's {result['modules']} modules")
    if args.list:
        for row in result["files"]:
            print(f"  {row['ms']:8.1f} ms  {row['file']:<32} {', '.join(row['functions'])[:90]}")
    if args.json:
        args.json.write_text(json.dumps(result, indent=2) + "\n")


if __name__ == "__main__":
    main()
