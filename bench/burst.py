"""`python -m bench --only burst [--against REV …]`: figure 3's burst alone — 200 thread messages delivered at
once by 32 senders, each acknowledged — on SQLite and PostgreSQL, for this checkout and, side by side, for other
git revisions.

Each (checkout, database) runs as its own `python -m bot` (a revision from a temporary git worktree, on this
checkout's virtualenv) with a database of its own: a SQLite file, or a PostgreSQL database named after
THREADFORK_TEST_PG's with `_burst<n>` added, emptied first. Every round, each bot in turn (the order reversed
every other round, so a drift of the machine's speed hits all alike) opens 200 fresh forks and gets the burst
exactly as the full run's figure 3 does (`Threadfork.load`). The table gives each one's burst-ack p99 per round,
the median of those p99s and of the acks' medians.
"""
from __future__ import annotations

import statistics
import subprocess
import tempfile
from pathlib import Path

from sqlalchemy import create_engine, text
from sqlalchemy.engine import make_url

from tests.fakes.anthropic_api import FakeAnthropic
from tests.fakes.slack_api import FakeSlack

from .measure import percentile
from .rig import Rig, progress
from .threadfork import Threadfork


def run(root: Path, revisions: list[str], rounds: int, postgres: str | None, quick: bool, sqlite: bool = True) -> dict:
    """{(checkout, database): [load of each round …]} for this checkout ("this") and each revision."""
    tmp = Path(tempfile.mkdtemp(prefix="threadfork-burst-"))
    paths = {"this": root}
    for revision in revisions:
        path = tmp / revision.replace("/", "_")
        subprocess.run(["git", "-C", str(root), "worktree", "add", "--detach", str(path), revision], check=True,
                       capture_output=True)
        paths[revision] = path
    slack, claude = FakeSlack().start(), FakeAnthropic().start()
    benches: dict[tuple[str, str], Threadfork] = {}
    try:
        for n, (name, path) in enumerate(paths.items()):
            urls = {"sqlite": f"sqlite:///{tmp / f'burst{n}.db'}"} if sqlite else {}
            if postgres:
                urls["postgresql"] = emptied(postgres, f"_burst{n}")
            for label, url in urls.items():
                progress(f"starting {name} on {label}")
                rig = Rig(slack, claude, tmp, url, f"burst{n}{label}", path=path)
                benches[(name, label)] = Threadfork(rig, label, quick)
        results: dict[tuple[str, str], list[dict]] = {key: [] for key in benches}
        order = list(benches)
        for n in range(rounds):
            for key in (order if n % 2 == 0 else order[::-1]):
                bench = benches[key]
                bench.label = f"r{n}{key[1][:2]}{order.index(key)}"  # each round's forks in channels of their own
                progress(f"round {n + 1}/{rounds}: {key[0]} on {key[1]}")
                results[key].append(bench.load())
        return results
    finally:
        for bench in benches.values():
            bench.rig.stop()
            bench.close()
        slack.stop()
        claude.stop()
        for path in list(paths.values())[1:]:
            subprocess.run(["git", "-C", str(root), "worktree", "remove", "--force", str(path)], capture_output=True)
        progress("")


def emptied(url: str, suffix: str) -> str:
    """A PostgreSQL database of its own beside `url`'s (created when missing), every table dropped."""
    mine = make_url(url)
    mine = mine.set(database=f"{mine.database}{suffix}")
    admin = create_engine(mine.set(database="postgres"), isolation_level="AUTOCOMMIT")
    try:
        with admin.connect() as conn:
            if conn.execute(text("SELECT 1 FROM pg_database WHERE datname = :n"), {"n": mine.database}).first() is None:
                conn.execute(text(f"CREATE DATABASE {conn.dialect.identifier_preparer.quote(mine.database)}"))
    finally:
        admin.dispose()
    engine = create_engine(mine)
    with engine.begin() as conn:
        conn.execute(text("DROP SCHEMA public CASCADE"))
        conn.execute(text("CREATE SCHEMA public"))
    engine.dispose()
    return mine.render_as_string(hide_password=False)


def cpu(loads: list[dict]) -> str:
    """The bot's CPU per reply under the load, and its database's (PostgreSQL's backends), medians of the rounds."""
    bot = statistics.median(load["cpu"] / load["count"] * 1000 for load in loads)
    if loads[0].get("database_cpu") is None:
        return f"{bot:.1f} ms"
    database = statistics.median(load["database_cpu"] / load["count"] * 1000 for load in loads)
    return f"{bot:.1f} + {database:.1f} ms"


def table(results: dict) -> str:
    lines = ["| checkout | database | burst ack p99 each round | median p99 | median of the medians | wall, median "
             "| CPU per reply, bot + database |", "|---|---|---|---:|---:|---:|---:|"]
    for (name, label), loads in results.items():
        p99s = [percentile(load["burst"], 99) for load in loads]
        medians = [statistics.median(load["burst"]) for load in loads]
        lines.append(f"| {name} | {label} | {' / '.join(f'{p:.0f}' for p in p99s)} ms | "
                     f"{statistics.median(p99s):.0f} ms | {statistics.median(medians):.0f} ms | "
                     f"{statistics.median(load['wall'] for load in loads):.2f} s | {cpu(loads)} |")
    return "\n".join(lines)
