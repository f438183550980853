"""`python -m bench`: Threadfork's benchmarks (see docs/benchmarks.md).

Starts the bot in HTTP mode (a real `python -m bot` process) against the test suite's fake Slack
and fake Anthropic servers, drives it with signed requests, then does the same to the baseline
(`python -m bench.baseline`, a plain Bolt bot with no database) on fakes of its own, one process
each. Prints two tables and writes them to bench/RESULTS.md with the machine's description (and,
after a full run, the comparison into docs/benchmarks.md between its marks). Times are medians, p99,
means and ratios; nothing here is asserted: the test suite never depends on a machine's speed.
"""
from __future__ import annotations

import argparse
import json
import os
import sys
import tempfile
import time
from pathlib import Path

from tests.fakes.anthropic_api import FakeAnthropic
from tests.fakes.slack_api import FakeSlack

from . import against, burst, day, replicas, rounds
from .measure import machine
from .report import (DAY_MARKS, REPLICA_MARKS, TARGET_MARKS, day_table, replace_marked, targets, update_readme,
                     versus)
from .rig import Rig, progress, unlimited
from .threadfork import Threadfork
from .versus import Baseline

ROOT = Path(__file__).resolve().parents[1]
PG_URL = os.environ.get("THREADFORK_TEST_PG", "postgresql+psycopg://postgres@127.0.0.1:5432/threadfork_test")


def run(quick: bool, with_postgres: bool) -> dict:
    raw: dict = {"reads": 0, "turns": 0}
    tmp = Path(tempfile.mkdtemp(prefix="threadfork-bench-"))
    databases = [("sqlite", f"sqlite:///{tmp / 'bench.db'}")]
    if with_postgres and postgres_ready():
        databases.append(("postgresql", PG_URL))
    for n, (label, url) in enumerate(databases):
        with Threadfork.on_fresh_fakes(raw, tmp, url, label, quick) as bench:
            raw[label] = {"overhead": bench.overhead(), "fork": bench.fork_cost(),
                          "nested": bench.nested_fork_cost(), "load": bench.load()}
            if label == "sqlite":
                raw["stream"] = bench.stream()
                raw["economy"] = bench.token_economy_and_cache()
                raw["images"] = bench.images()
        if n == 0:  # the baseline right after Threadfork on SQLite, so the machine has drifted least
            raw["baseline"] = baseline(tmp, quick)
            raw["day"] = day.run(tmp)  # figure 11: its own fakes, one bot process per run
    # figure 4 again with two worker processes sharing the port (THREADFORK_PROCESSES=2)
    with Threadfork.on_fresh_fakes(raw, tmp, f"sqlite:///{tmp / 'bench-processes.db'}", "processes", quick,
                                   processes=2) as bench:
        raw["sqlite, 2 processes"] = {"load": bench.load()}
    if with_postgres and "postgresql" in raw:  # figure 12 on the same database, emptied again
        postgres_ready()
        raw["replicas"] = replicas.run(tmp, PG_URL, quick)
    progress("")
    print(file=sys.stderr)
    return raw


def baseline(tmp: Path, quick: bool) -> dict:
    """The baseline's figures, on fresh fakes: neither bot's recorded traffic weighs on the other."""
    slack, claude = unlimited(FakeSlack().start()), FakeAnthropic().start()
    bench = Baseline(Rig(slack, claude, tmp, "", "baseline", module="bench.baseline"), quick)
    try:
        return {"overhead": bench.overhead(), "load": bench.load(), "stream": bench.stream(),
                "violations": list(slack.violations)}
    finally:
        bench.rig.stop()
        slack.stop()
        claude.stop()


def postgres_ready() -> bool:
    """The bench's PostgreSQL database, created when missing (a new machine has none) and emptied (every table,
    whoever made it: a migration finds none)."""
    try:
        burst.emptied(PG_URL, "")
        return True
    except Exception as error:  # noqa: BLE001
        print(f"PostgreSQL not reachable ({type(error).__name__}); its figures are skipped", file=sys.stderr)
        return False


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="fewer samples and 50 concurrent replies")
    parser.add_argument("--no-postgres", action="store_true", help="skip the PostgreSQL figures")
    parser.add_argument("--no-sqlite", action="store_true", help="with --only burst: skip SQLite")
    parser.add_argument("--only", choices=["day", "load", "burst", "replicas"],
                        help="one figure alone: `day` is figure 11, a team's day priced; `load` is figure 4 against "
                             "the baseline, round by round; `burst` is figure 3's burst acks on SQLite and "
                             "PostgreSQL (with --against: side by side with those revisions); `replicas` is figure 12, "
                             "two replicas on one PostgreSQL")
    parser.add_argument("--against", nargs="+", metavar="REV",
                        help="figure 1 alone, this checkout side by side with these git revisions (SQLite)")
    parser.add_argument("--rounds", type=int,
                        help="with --only load or burst: how many rounds (default 5); with --against: 60")
    args = parser.parse_args()
    if args.only == "burst":
        pg = None if args.no_postgres else PG_URL
        print(burst.table(burst.run(ROOT, args.against or [], args.rounds or 5, pg, args.quick, not args.no_sqlite)))
        return 0
    if args.against:
        results = against.run(ROOT, args.against, args.rounds or 60)
        print(against.table(results, ["this", *args.against]))
        return 0
    if args.only == "day":
        return only_day()
    if args.only == "replicas":
        if not postgres_ready():
            return 1
        raw = replicas.run(Path(tempfile.mkdtemp(prefix="threadfork-replicas-")), PG_URL, args.quick)
        print(replicas.table(raw))
        return 0
    if args.only == "load":
        print(rounds.table(rounds.run(args.rounds or 5, args.quick)))
        return 0
    raw = run(args.quick, with_postgres=not args.no_postgres)
    (ROOT / "bench" / "raw.json").write_text(json.dumps(raw, indent=1, default=str))
    against_targets, against_baseline = targets(raw), versus(raw)
    print(against_targets + "\n\n" + against_baseline)
    when = time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime())
    report = (f"# Threadfork benchmark results\n\nMachine: {machine()}.\nRun: `./scripts/bench"
              f"{' --quick' if args.quick else ''}` on {when}. "
              "Fakes answer with zero latency unless a stream is scripted (5 s for figures 3–4, 10 s for figure 5).\n\n"
              f"{against_targets}\n\n## Against a plain Bolt bot\n\n{BASELINE_NOTE}\n\n{against_baseline}\n")
    two_replicas = replicas.table(raw["replicas"]) if "replicas" in raw else ""
    if two_replicas:
        report += f"\n## Figure 12: two replicas on one PostgreSQL\n\n{two_replicas}\n"
    (ROOT / "bench" / "RESULTS.md").write_text(report)
    if not args.quick:
        page, source = ROOT / "docs" / "benchmarks.md", f"Full run of {when} ([`bench/RESULTS.md`](../bench/RESULTS.md))"
        replace_marked(page, TARGET_MARKS, f"{source}, {machine()}:\n\n{against_targets}")
        update_readme(page, f"{source}:\n\n{against_baseline}")
        if two_replicas:
            replace_marked(page, REPLICA_MARKS, f"{source}:\n\n{two_replicas}")
        write_day(raw["day"], when)
    return 0


def only_day() -> int:
    """Figure 11 alone: its table printed, and written into docs/benchmarks.md and the README."""
    raw = day.run(Path(tempfile.mkdtemp(prefix="threadfork-day-")))
    progress("")
    print(file=sys.stderr)
    (ROOT / "bench" / "raw-day.json").write_text(json.dumps(raw, indent=1))
    print(day_table(raw))
    write_day(raw, time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime()))
    return 0


def write_day(raw: dict, when: str) -> None:
    table = day_table(raw)
    replace_marked(ROOT / "docs" / "benchmarks.md", DAY_MARKS, f"Run of {when}:\n\n{table}")
    replace_marked(ROOT / "README.md", DAY_MARKS, f"{table}\n\nHow the day is played: [Benchmarks](docs/benchmarks.md"
                                                  "#figure-11-a-teams-day-priced).")


BASELINE_NOTE = (
    "The baseline (`bench/baseline/`) is the bot a Slack developer would write from Slack's and Anthropic's "
    "examples: sync Bolt on a pool of THREADFORK_WORKERS threads, the Anthropic SDK's `messages.stream` "
    "helper, slack-sdk's `chat_stream` in threads (after `assistant.threads.setStatus`, as Slack's sample "
    "does) and `chat.postMessage` then `chat.update` about once a second at a channel's top level; each "
    "conversation's history in a dict, no database, no forks. It is served as Threadfork is (gunicorn, one "
    "gthread worker, 16 request threads) on fakes of its own, one process against one process (a dict cannot be shared between "
    "processes). Figure 1 fills its history to 10 / 100 / 1,000 turns by sending it the messages "
    "Threadfork's store is seeded with; CPU time is the bot process's user + system time over the "
    "measured replies ÷ their number. Figures 3–4 open its threads with an @-mention instead of `/fork` "
    "and measure event acks only (it has no slash commands). Ratio = Threadfork ÷ baseline.")


if __name__ == "__main__":
    sys.exit(main())
