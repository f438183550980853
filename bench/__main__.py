"""`python -m bench`: Threadfork's benchmarks (see bench/README section in the main README).

Starts the bot in HTTP mode (a real `python -m bot` process) against the test suite's fake Slack
and fake Anthropic servers, drives it with signed requests, prints one table and writes it to
bench/RESULTS.md with the machine's description. Times are medians, p99 and ratios; nothing here
is asserted: the test suite never depends on a machine's speed.
"""
from __future__ import annotations

import argparse
import json
import os
import platform
import statistics
import sys
import tempfile
import time
import urllib.parse
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

from sqlalchemy import create_engine, text

from bot.domain.model import Role, TurnStatus, Usage
from bot.store import Store, make_engine
from tests.fakes.anthropic_api import FakeAnthropic, Script
from tests.fakes.slack_api import BOT_USER_ID, TEAM_ID, FakeSlack
from tests.harness import answering, wait_until
from tests.processes import BotProcess, worker_pids

ROOT = Path(__file__).resolve().parents[1]
PG_URL = os.environ.get("THREADFORK_TEST_PG", "postgresql+psycopg://postgres@127.0.0.1:5432/threadfork_test")


class Bench:
    def __init__(self, quick: bool):
        self.quick = quick
        self.slack = FakeSlack().start()
        self.claude = FakeAnthropic().start()
        self.tmp = Path(tempfile.mkdtemp(prefix="threadfork-bench-"))
        self.ts = 0
        self.rows: list[tuple[str, str, str, str]] = []  # figure, measured, target, verdict
        self.raw: dict = {}

    # plumbing ---------------------------------------------------------------------------

    def progress(self, text: str) -> None:
        print(f"\r\033[K{text}", end="", file=sys.stderr, flush=True)

    def next_ts(self) -> str:
        self.ts += 1
        return f"{1_750_000_000 + self.ts}.{self.ts:06d}"

    def start_bot(self, url: str, name: str, processes: int = 1) -> BotProcess:
        bot = BotProcess(self.tmp, self.slack, self.claude, url, name=name, threadfork_sweep_interval="1h",
                         log_level="WARNING", threadfork_processes=processes)
        bot.wait_healthy(timeout=60)
        return bot

    def mention(self, bot: BotProcess, channel: str, text: str, thread_ts: str | None = None) -> tuple[str, float]:
        ts = self.next_ts()
        event = {"type": "app_mention", "channel": channel, "user": "UBENCH01", "text": f"<@{BOT_USER_ID}> {text}",
                 "ts": ts, "event_ts": ts, "team": TEAM_ID}
        if thread_ts:
            event = {"type": "message", "channel": channel, "user": "UBENCH01", "text": text, "ts": ts,
                     "event_ts": ts, "team": TEAM_ID, "thread_ts": thread_ts, "channel_type": "channel"}
        request = bot.signed_event(event, f"EvB{ts}")  # building and signing it is Slack's work
        started = time.monotonic()
        assert bot.send(request) == 200
        return ts, started

    def slash(self, bot: BotProcess, command: str, text: str, channel: str) -> tuple[float, float]:
        """Send a signed slash command; (when it was handed over, how long the ack took)."""
        form = {"command": command, "text": text, "user_id": "UBENCH01", "user_name": "bench", "channel_id": channel,
                "team_id": TEAM_ID, "response_url": self.slack.response_url("bench"), "trigger_id": "1.t",
                "api_app_id": "A0BENCH", "token": "unused"}
        request = bot.signed(urllib.parse.urlencode(form).encode(), "application/x-www-form-urlencoded")
        started = time.monotonic()
        assert bot.send(request) == 200
        return started, time.monotonic() - started

    def wait(self, predicate, timeout: float = 60.0, interval: float = 0.002):
        return wait_until(predicate, timeout=timeout, interval=interval, message="the bot to finish")

    def settle(self, timeout: float = 60.0) -> None:
        """Wait until no answer is waiting or being written (read from the bot's database)."""
        # a table scan: polled gently, so the bench process does not steal the fakes' time
        self.wait(lambda: not answering(self.db), timeout=timeout, interval=0.01)

    def answered(self, bot: BotProcess, channel: str, text: str, thread_ts: str | None = None) -> None:
        """Send a message and wait until its answer is complete."""
        requests = len(self.claude.requests)
        self.mention(bot, channel, text, thread_ts=thread_ts)
        self.wait(lambda: len(self.claude.requests) > requests)
        self.settle()

    def populate(self, url: str, channel: str, turns: int) -> None:
        store = Store(make_engine(url))
        store.create_schema()
        parent = store.parent_id(channel, TEAM_ID)
        for n in range(turns // 2):
            store.append_turn(parent, Role.USER, f"question {n}: " + "context words " * 20, TurnStatus.ANSWERED,
                              author_id="UBENCH01", author_name="bench")
            store.append_turn(parent, Role.ASSISTANT, f"answer {n}: " + "considered reply " * 30,
                              TurnStatus.COMPLETE, usage=Usage(1000 + n * 60, 80))
        store.engine.dispose()

    # figures ----------------------------------------------------------------------------

    def overhead(self, bot: BotProcess, url: str, label: str) -> dict:
        """Figure 1: signed delivery → model request sent, plus last token → the turn's final Slack call.
        Sizes take turns, round after round, so a drift in the machine's speed hits all alike."""
        sizes, samples = (10, 100, 1000), 15 if self.quick else 40
        channels = {size: f"C{label[:2].upper()}{size}" for size in sizes}
        for size, channel in channels.items():
            self.populate(url, channel, size)
        results: dict[int, list[float]] = {size: [] for size in sizes}
        for n in range(samples + 3):
            self.progress(f"[{label}] overhead at 10 / 100 / 1,000 turns: round {n + 1}/{samples + 3}")
            for size, channel in channels.items():
                index, calls = len(self.claude.requests), len(self.slack.calls)
                self.claude.script(Script(text=f"ok {n}", chunks=1))
                ts, sent = self.mention(bot, channel, f"turn {n}")
                self.wait(lambda: len(self.claude.requests) > index)
                self.settle()
                inbound = self.claude.received_at[index] - sent
                outbound = max(c.at for c in self.slack.calls[calls:]) - self.claude.finished_at[index]
                if n >= 3:  # warm-up
                    results[size].append((inbound + outbound) * 1000)
        return results

    def fork_cost(self, bot: BotProcess, label: str) -> dict:
        """Figure 2: /fork on a 1,000-turn parent against a 10-turn parent (delivery → root posted),
        alternating between the two."""
        sizes, samples = (10, 1000), 10 if self.quick else 40
        results: dict[int, list[float]] = {size: [] for size in sizes}
        for n in range(samples):
            self.progress(f"[{label}] /fork on a 10- and a 1,000-turn parent: {n + 1}/{samples}")
            for size in sizes:
                channel = f"C{label[:2].upper()}{size}"
                roots_before = len([m for m in self.slack.posts(channel, top_level=True) if m.get("blocks")])
                started, _ = self.slash(bot, "/fork", "--inherit", channel)
                root = self.wait(lambda: [m for m in self.slack.posts(channel, top_level=True)
                                          if m.get("blocks")][roots_before:])
                results[size].append((root[0].created - started) * 1000)
        return results

    def load(self, bot: BotProcess, label: str) -> dict:
        """Figures 3 and 4: 200 fork replies streaming for 5 s each; acks measured meanwhile."""
        count = 50 if self.quick else 200
        channel = "CLOAD" + "".join(c for c in label.upper() if c.isalnum())[:8]
        roots = []
        for n in range(count):
            self.progress(f"[{label}] opening {count} forks: {n + 1}/{count}")
            before = len([m for m in self.slack.posts(channel, top_level=True) if m.get("blocks")])
            self.slash(bot, "/fork", "--fresh", channel)
            roots.append(self.wait(lambda: [m for m in self.slack.posts(channel, top_level=True)
                                            if m.get("blocks")][before:])[0].ts)
        self.claude.default_script = Script(text="streamed words " * 25, chunks=10, chunk_delay=0.5)
        stops = lambda: self.slack.counts.get("chat.stopStream", 0)  # noqa: E731
        stops_before, requests_before = stops(), len(self.claude.requests)
        acks: list[float] = []
        started = time.monotonic()
        with ThreadPoolExecutor(max_workers=32) as pool:
            list(pool.map(lambda root: self.mention(bot, channel, "go", thread_ts=root), roots))
            self.progress(f"[{label}] {count} replies streaming; measuring acks")
            delivered = time.monotonic()
            while time.monotonic() - delivered < 4.0 or len(acks) < 40:
                ts = self.next_ts()
                chatter = {"type": "message", "channel": channel, "user": "UBENCH02", "text": "chatter", "ts": ts,
                           "event_ts": ts, "team": TEAM_ID, "channel_type": "channel"}
                t0 = time.monotonic()
                bot.event(chatter, f"EvA{ts}")
                acks.append((time.monotonic() - t0) * 1000)
                acks.append(self.slash(bot, "/fork", "help", channel)[1] * 1000)
                time.sleep(0.05)
            self.wait(lambda: stops() - stops_before >= count, timeout=60, interval=0.02)
        wall = time.monotonic() - started
        completed = stops() - stops_before
        parts = [peak_rss_mb(pid) for pid in [bot.proc.pid, *sorted(worker_pids(bot.proc.pid))]]
        rss = sum(parts)
        self.claude.default_script = None
        # where the wall time went: requests reaching Claude, streams ending, streams closed in Slack
        sent = sorted(self.claude.received_at[requests_before:requests_before + count])
        ended = sorted(self.claude.finished_at[i] for i in range(requests_before, requests_before + count)
                       if i in self.claude.finished_at)
        closed = sorted(c.at for c in self.slack.calls_to("chat.stopStream"))[-count:]
        return {"acks": acks, "wall": wall, "completed": completed, "count": count, "rss": rss, "rss_parts": parts,
                "delivery": delivered - started, "last_request": sent[-1] - started,
                "last_stream_end": ended[-1] - started, "last_close": closed[-1] - started}

    def slack_calls_and_first_token(self, bot: BotProcess) -> dict:
        """Figure 5: Slack calls for a 10-s streamed fork reply; first token → first visible text."""
        channel = "CSTREAM"
        self.slash(bot, "/fork", "--fresh", channel)
        root = self.wait(lambda: [m for m in self.slack.posts(channel, top_level=True) if m.get("blocks")])[0].ts
        time.sleep(0.3)
        self.claude.script(Script(text="A thoughtful streamed answer. " * 60, chunks=50, chunk_delay=0.2))
        calls_before, requests_before = len(self.slack.calls), len(self.claude.requests)
        self.progress("[sqlite] a 10-s streamed reply")
        self.mention(bot, channel, "stream please", thread_ts=root)
        self.wait(lambda: len(self.claude.requests) > requests_before)
        self.settle(timeout=30)
        calls = self.slack.calls[calls_before:]
        start = next(c for c in calls if c.method == "chat.startStream")
        first_token = self.claude.first_delta_at[-1]
        return {"calls": len(calls), "methods": sorted({c.method for c in calls}),
                "first_visible": start.at - first_token,
                "stream": self.claude.finished_at[requests_before] - self.claude.received_at[requests_before]}

    def token_economy_and_cache(self, bot: BotProcess) -> dict:
        """Figures 7 and 8: an 80K-token fork off a 30K-token parent; the fork's prompt-cache reuse."""
        channel = "CECONOMY"
        words = "The parent conversation states facts and constraints at some length. "
        self.claude.default_script = None
        for n in range(10):  # ~30K tokens of real parent text (the fake counts 4 characters a token)
            self.progress(f"[sqlite] token economy: parent turn {n + 1}/10")
            self.claude.script(Script(text=f"reply {n}: " + words * 80))
            self.answered(bot, channel, f"point {n}: " + words * 90)
        parent_before = self.claude.requests[-1]
        first_fork_request = len(self.claude.requests)
        self.slash(bot, "/fork", "--inherit explore the options", channel)
        root = self.wait(lambda: [m for m in self.slack.posts(channel, top_level=True) if m.get("blocks")])[0].ts
        self.wait(lambda: len(self.claude.requests) > first_fork_request)
        self.settle()
        fork_first = self.claude.requests[first_fork_request]
        burned = 0
        n = 0
        while burned < 80_000:
            n += 1
            self.progress(f"[sqlite] token economy: fork burned {burned:,} tokens")
            self.claude.script(Script(text=f"exploration {n}: " + words * 40))
            self.answered(bot, channel, f"idea {n}", thread_ts=root)
            burned = fork_burn(bot)
        self.claude.script(Script(text="Decision and rationale. " * 400))  # ~2.4K-token summary
        bot.event({"type": "reaction_added", "user": "UBENCH01", "reaction": "white_check_mark",
                   "item": {"type": "message", "channel": channel, "ts": root}, "event_ts": self.next_ts()},
                  f"EvMERGE{root}")
        self.wait(lambda: [p for p in self.slack.posts(channel, top_level=True) if "merged fork" in p.get("text", "")])
        self.answered(bot, channel, "what did the fork decide?")
        after = self.claude.requests[-1]
        parent_tokens = len(json.dumps(parent_before["messages"])) // 4
        after_tokens = len(json.dumps(after["messages"])) // 4
        return {"parent": parent_tokens, "burned": burned, "after": after_tokens,
                "cache": cache_reuse(parent_before, fork_first)}

    # report -----------------------------------------------------------------------------

    def run(self, with_postgres: bool) -> None:
        databases = [("sqlite", f"sqlite:///{self.tmp / 'bench.db'}")]
        if with_postgres and postgres_ready():
            databases.append(("postgresql", PG_URL))
        for label, url in databases:
            bot = self.start_bot(url, label)
            self.db = create_engine(url)
            try:
                self.raw[label] = {"overhead": self.overhead(bot, url, label),
                                   "fork": self.fork_cost(bot, label), "load": self.load(bot, label)}
                if label == "sqlite":
                    self.raw["stream"] = self.slack_calls_and_first_token(bot)
                    self.raw["economy"] = self.token_economy_and_cache(bot)
            finally:
                bot.stop()
                self.db.dispose()
        # figure 4 again with two worker processes sharing the port (THREADFORK_PROCESSES=2)
        label, url = "sqlite, 2 processes", f"sqlite:///{self.tmp / 'bench-processes.db'}"
        bot = self.start_bot(url, "processes", processes=2)
        self.db = create_engine(url)
        try:
            self.raw[label] = {"load": self.load(bot, label)}
        finally:
            bot.stop()
            self.db.dispose()
        self.raw["reads"] = len([c for c in self.slack.calls if c.method.startswith("conversations.")])
        self.raw["turns"] = len(self.claude.requests)
        self.progress("")
        print(file=sys.stderr)

    def table(self) -> str:
        r = self.raw
        lines = ["| # | figure | measured | target | met |", "|---|---|---|---|---|"]

        def row(number, name, measured, target, met):
            lines.append(f"| {number} | {name} | {measured} | {target} | {'yes' if met else '**no**'} |")

        for label in [k for k in ("sqlite", "postgresql") if k in r]:
            o, f, load = r[label]["overhead"], r[label]["fork"], r[label]["load"]
            med = {s: statistics.median(v) for s, v in o.items()}
            p99 = {s: percentile(v, 99) for s, v in o.items()}
            tag = "" if label == "sqlite" else " (PostgreSQL)"
            row(1 if label == "sqlite" else 9, f"overhead per turn{tag}",
                " · ".join(f"{s:,} turns: median {med[s]:.1f} ms, p99 {p99[s]:.1f} ms" for s in (10, 100, 1000))
                + f" · 1,000/10 median ratio {med[1000] / med[10]:.2f}",
                "median ≤ 10 ms, p99 ≤ 50 ms at 1,000 turns; ratio ≤ 3",
                med[1000] <= 10 and p99[1000] <= 50 and med[1000] / med[10] <= 3)
            fm = {s: statistics.median(v) for s, v in f.items()}
            row(2 if label == "sqlite" else 9, f"`/fork` cost{tag}",
                f"10 turns: median {fm[10]:.1f} ms · 1,000 turns: median {fm[1000]:.1f} ms · ratio {fm[1000] / fm[10]:.2f}",
                "ratio ≤ 1.5", fm[1000] / fm[10] <= 1.5)
            row(3 if label == "sqlite" else 9, f"ack while {load['count']} replies stream{tag}",
                f"median {statistics.median(load['acks']):.1f} ms, p99 {percentile(load['acks'], 99):.1f} ms "
                f"({len(load['acks'])} acks)", "p99 ≤ 100 ms", percentile(load["acks"], 99) <= 100)
            row(4 if label == "sqlite" else 9, f"concurrent replies and RSS{tag}",
                f"{load['completed']}/{load['count']} complete in {load['wall']:.2f} s wall (delivering them took "
                f"{load['delivery']:.2f} s; last model request {load['last_request']:.2f} s, last stream ended "
                f"{load['last_stream_end']:.2f} s, last closed in Slack {load['last_close']:.2f} s); "
                f"peak RSS {load['rss']:.0f} MB",
                "all within 6.5 s, none lost; RSS ≤ 400 MB",
                load["completed"] == load["count"] and load["wall"] <= 6.5 and load["rss"] <= 400)
        if "sqlite, 2 processes" in r:
            load = r["sqlite, 2 processes"]["load"]
            row(4, "concurrent replies and RSS (SQLite, THREADFORK_PROCESSES=2)",
                f"{load['completed']}/{load['count']} complete in {load['wall']:.2f} s wall (delivering them took "
                f"{load['delivery']:.2f} s; last model request {load['last_request']:.2f} s); "
                f"peak RSS {' + '.join(f'{p:.0f}' for p in load['rss_parts'])} = {load['rss']:.0f} MB "
                "(gunicorn master + workers; pages shared since the fork count in each)",
                "all within 6.5 s, none lost; RSS ≤ 400 MB",
                load["completed"] == load["count"] and load["wall"] <= 6.5 and load["rss"] <= 400)
        if "stream" in r:
            s = r["stream"]
            row(5, "Slack calls and first token",
                f"{s['calls']} Slack calls for a {s['stream']:.1f}-s streamed reply ({', '.join(s['methods'])}); "
                f"first token → first visible text {s['first_visible'] * 1000:.0f} ms",
                "≤ 12 calls; ≤ 1 s", s["calls"] <= 12 and s["first_visible"] <= 1)
        row(6, "`conversations.*` reads", f"{r['reads']} over {r['turns']} model turns (0 per turn)", "0",
            r["reads"] == 0)
        if "economy" in r:
            e = r["economy"]
            row(7, "token economy", f"parent {e['parent']:,} tokens; fork burned {e['burned']:,}; parent input after "
                f"merge {e['after']:,} tokens", "≤ 35K after merge", e["after"] <= 35_000)
            c = e["cache"]
            row(8, "cache", f"shared prefix {c['shared_share']:.1%} of the fork's first input, up to the parent's "
                f"breakpoint at block {c['parent_breakpoint']}; the fork's own breakpoint "
                f"{c['fork_breakpoint'] - c['parent_breakpoint']} blocks after it",
                "byte-identical prefix, breakpoint within 20 blocks, ≥ 90 %",
                c["identical"] and 0 <= c["fork_breakpoint"] - c["parent_breakpoint"] <= 20
                and c["shared_share"] >= 0.9)
        return "\n".join(lines)

    def stop(self) -> None:
        self.slack.stop()
        self.claude.stop()


def percentile(values: list[float], p: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(round(p / 100 * (len(ordered) - 1))))]


def peak_rss_mb(pid: int) -> float:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmHWM:"):
            return int(line.split()[1]) / 1024
    return float("nan")


def fork_burn(bot: BotProcess) -> int:
    engine = create_engine(bot_database(bot))
    try:
        with engine.connect() as conn:
            return int(conn.execute(text(
                "SELECT COALESCE(SUM(t.input_tokens + t.output_tokens + t.cache_read_tokens + t.cache_write_tokens), 0) "
                "FROM turns t JOIN sessions s ON s.id = t.session_id WHERE s.kind = 'fork' AND s.channel_id = 'CECONOMY'"
            )).scalar())
    finally:
        engine.dispose()


def bot_database(bot: BotProcess) -> str:
    return f"sqlite:///{bot.log.parent / 'bench.db'}"


def cache_reuse(parent: dict, fork: dict) -> dict:
    """Figure 8: does the fork's first request read the parent's cached prefix?"""
    def blocks(request):
        out = [dict(b) for b in request["system"]]
        for message in request["messages"]:
            out += [{**b, "_role": message["role"]} for b in message["content"]]
        return out

    def plain(block):
        return json.dumps({k: v for k, v in block.items() if k != "cache_control"}, sort_keys=True)

    p, f = blocks(parent), blocks(fork)
    marks = [i for i, b in enumerate(p) if "cache_control" in b]
    best = max((i for i in marks if i < len(f) and [plain(b) for b in p[: i + 1]] == [plain(b) for b in f[: i + 1]]),
               default=-1)
    own = [i for i, b in enumerate(f) if "cache_control" in b and i >= best]
    shared = sum(len(plain(b)) for b in f[: best + 1])
    total = sum(len(plain(b)) for b in f)
    return {"identical": best >= 0, "parent_breakpoint": best, "fork_breakpoint": own[0] if own else -1,
            "shared_share": shared / total if total else 0}


def postgres_ready() -> bool:
    try:
        engine = create_engine(PG_URL)
        with engine.begin() as conn:
            for table in ("messages", "turns", "claims", "sessions", "alembic_version"):
                conn.execute(text(f"DROP TABLE IF EXISTS {table} CASCADE"))
        engine.dispose()
        return True
    except Exception as error:  # noqa: BLE001
        print(f"PostgreSQL not reachable ({type(error).__name__}); its figures are skipped", file=sys.stderr)
        return False


def machine() -> str:
    cpu = next((l.split(":", 1)[1].strip() for l in Path("/proc/cpuinfo").read_text().splitlines()
                if l.startswith("model name")), platform.processor())
    memory = next((int(l.split()[1]) // 1024 // 1024 for l in Path("/proc/meminfo").read_text().splitlines()
                   if l.startswith("MemTotal")), 0)
    return (f"{os.cpu_count()} cores ({cpu}), {memory} GiB RAM, {platform.system()} {platform.release()}, "
            f"Python {platform.python_version()}")


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="fewer samples and 50 concurrent replies")
    parser.add_argument("--no-postgres", action="store_true", help="skip the PostgreSQL figures")
    args = parser.parse_args()
    bench = Bench(args.quick)
    try:
        bench.run(with_postgres=not args.no_postgres)
    finally:
        bench.stop()
    (ROOT / "bench" / "raw.json").write_text(json.dumps(bench.raw, indent=1, default=str))
    table = bench.table()
    print(table)
    report = (f"# Threadfork benchmark results\n\nMachine: {machine()}.\nRun: `./scripts/bench"
              f"{' --quick' if args.quick else ''}` on {time.strftime('%Y-%m-%d %H:%M UTC', time.gmtime())}. "
              "Fakes answer with zero latency unless a stream is scripted (5 s for figures 3–4, 10 s for figure 5).\n\n"
              f"{table}\n")
    (ROOT / "bench" / "RESULTS.md").write_text(report)
    return 0


if __name__ == "__main__":
    sys.exit(main())
