"""Figure 12: two replicas on one PostgreSQL, driven to saturation (`python -m bench --only replicas`).

Two `python -m bot` processes (each one worker, as a replica of a deployment) share one PostgreSQL database and
the fakes; the workspaces are installed once, through the first (the second reads the same installation tables).
A phase opens COUNT forks — one a thread, over COUNT / 8 fresh workspaces, so Slack's per-workspace rate limits
are never the bottleneck — then sends one message to every fork's thread at once (32 senders), the messages
dealt to the replicas in turn; the fake Claude answers at once, so each replica's own CPU and the database are
all there is to wait for. That backlog is the saturation: turns per second are the turns ÷ the time from the
first delivery to the last reply closed in Slack (chat.stopStream). Then the same with one replica alone, the
other idle, for how the rate grows with a second replica.

CPU per turn is each party's over the phase ÷ the turns: the replicas' processes; PostgreSQL's backends serving
the database (bench/database_cpu.py, /proc); and this process (the fakes), so the machine's whole budget shows.
"""
from __future__ import annotations

import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

from tests.fakes.anthropic_api import FakeAnthropic
from tests.fakes.slack_api import FakeSlack

from .rig import Rig, progress

COUNT = 400  # turns a phase (100 with --quick)
PER_WORKSPACE = 8  # forks a workspace: chat.startStream is 20 a minute per workspace (Tier 2)


def run(tmp: Path, url: str, quick: bool) -> dict:
    count = 100 if quick else COUNT
    slack, claude = FakeSlack().start(), FakeAnthropic().start()
    rigs: list[Rig] = []
    try:
        rigs.append(Rig(slack, claude, tmp, url, "replica-a"))
        rigs.append(Rig(slack, claude, tmp, url, "replica-b", install_default=False))
        return {"two": phase(rigs, rigs, count, "two replicas"),
                "one": phase(rigs, rigs[:1], count, "one replica"),
                "connections": connections(url)}
    finally:
        for rig in rigs:
            rig.stop()
        slack.stop()
        claude.stop()


def phase(rigs: list[Rig], serving: list[Rig], count: int, label: str) -> dict:
    first = rigs[0]
    teams = first.workspaces(count // PER_WORKSPACE)
    threads = []
    for n in range(count):
        progress(f"[{label}] opening {count} forks: {n + 1}/{count}")
        team, channel = teams[n % len(teams)], f"CREP{label[:3].upper()}{n % len(teams):03d}"
        rig = serving[n % len(serving)]
        before = len(rig.roots(channel))
        rig.slash("/fork", "--fresh", channel, team=team)
        threads.append((rig, team, channel, rig.wait(lambda: rig.roots(channel)[before:])[0].ts))
    time.sleep(1.0)  # the forks' opening work is over
    progress(f"[{label}] {count} turns at once")
    stops = first.stops()
    cpu = [rig.cpu() for rig in rigs]
    database, fakes = first.database_cpu(), time.process_time()
    if database:
        database.start()
    started = time.monotonic()

    def deliver(thread) -> None:
        rig, team, channel, root = thread
        rig.mention(channel, "go", thread_ts=root, team=team)

    with ThreadPoolExecutor(max_workers=32) as pool:
        list(pool.map(deliver, threads))
    first.wait(lambda: first.stops() - stops >= count, timeout=300, interval=0.05)
    wall = time.monotonic() - started
    return {"count": count, "replicas": len(serving), "wall": wall, "overall": count / wall,
            "bot_cpu": [rig.cpu() - before for rig, before in zip(rigs, cpu)],
            "database_cpu": database.stop() if database else None, "fakes_cpu": time.process_time() - fakes}


def connections(url: str) -> int:
    """The database connections the two replicas hold now (pg_stat_activity)."""
    from sqlalchemy import create_engine, text
    from sqlalchemy.engine import make_url

    engine = create_engine(make_url(url).set(database="postgres"))
    try:
        with engine.connect() as conn:
            return int(conn.execute(text("SELECT count(*) FROM pg_stat_activity WHERE datname = :d"),
                                    {"d": make_url(url).database}).scalar())
    finally:
        engine.dispose()


def table(r: dict) -> str:
    """Figure 12's rows, and what they make of one database's reach."""
    lines = ["| replicas serving | turns | turns / s at saturation | CPU per turn: replicas · PostgreSQL · the fakes |",
             "|---|---:|---:|---|"]
    for key in ("one", "two"):
        p = r[key]
        per = {name: value / p["count"] * 1000 for name, value in
               (("bot", sum(p["bot_cpu"])), ("fakes", p["fakes_cpu"]))}
        database = f"{p['database_cpu'] / p['count'] * 1000:.1f} ms" if p["database_cpu"] is not None else "—"
        lines.append(f"| {p['replicas']} | {p['count']} | {p['overall']:.0f} | "
                     f"{per['bot']:.1f} ms · {database} · {per['fakes']:.1f} ms |")
    return "\n".join(lines)


def reach(r: dict) -> dict:
    """What one database serves, from the two-replica phase: turns a second per core of PostgreSQL, turns a
    second per core of a replica, and so replicas per database core (each replica one busy core)."""
    two = r["two"]
    database_ms = two["database_cpu"] / two["count"] * 1000
    replica_ms = sum(two["bot_cpu"]) / two["count"] * 1000
    return {"database_ms": database_ms, "replica_ms": replica_ms, "per_database_core": 1000 / database_ms,
            "per_replica_core": 1000 / replica_ms, "replicas_per_database_core": replica_ms / database_ms,
            "connections": r["connections"]}
