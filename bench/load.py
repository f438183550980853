"""Figures 3, 4 and 5 for either bot, once its threads exist: many 5-s replies at once with acks
measured meanwhile, and one 10-s streamed reply. Both bots stream thread replies through
chat.startStream/appendStream/stopStream, so a closed stream is a finished reply for each.

The fake Slack enforces Slack's rate limits per workspace (chat.startStream and chat.stopStream: 20 a minute),
so the many replies are spread over WORKSPACES workspaces, each with a channel of its own: one workspace cannot
start 200 streams a minute. `spread` deals the threads out round-robin, so no channel gets two posts in a row."""
from __future__ import annotations

import itertools
import time
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor

from tests.fakes.anthropic_api import Script
from tests.fakes.slack_api import Team

from .measure import PeakTogether, peak_rss_mb, pids
from .rig import Rig, progress

Probe = Callable[[], list[tuple[str, float]]]  # one round of ack measurements: (kind, ms) each
PROBING = 4.0  # seconds of probe rounds while the replies stream, one round every PROBE_EVERY
PROBE_EVERY = 0.065
WORKSPACES = 25  # 200 replies: 8 a workspace, under chat.startStream's 20 a minute with the threads' opening


def spread(rig: Rig, count: int, label: str) -> list[tuple[Team, str]]:
    """(workspace, channel) for each of `count` threads, over new workspaces, round-robin."""
    teams = rig.workspaces(min(WORKSPACES, count))
    return [(teams[n % len(teams)], f"C{label}{n % len(teams):02d}") for n in range(count)]


def stream_replies(rig: Rig, roots: list[tuple[Team, str, str]], probe: Probe, label: str) -> dict:
    """A message in every thread of `roots` ((workspace, channel, root) each) at once, each answered over 5 s;
    acks meanwhile."""
    count = len(roots)
    rig.claude.default_script = Script(text="streamed words " * 25, chunks=10, chunk_delay=0.5)
    stops_before, requests_before = rig.stops(), len(rig.claude.requests)
    acks: dict[str, list[float]] = {}
    cpu_before, database = rig.cpu(), rig.database_cpu()
    if database:
        database.start()
    together = PeakTogether(pids(rig.bot)).start()
    started = time.monotonic()

    def deliver(place: tuple[Team, str, str]) -> float:  # the delivery's own ack, in ms: sent at once
        team, channel, root = place
        handed = rig.mention(channel, "go", thread_ts=root, team=team)[1]
        return (time.monotonic() - handed) * 1000

    with ThreadPoolExecutor(max_workers=32) as pool:
        burst = list(pool.map(deliver, roots))
    progress(f"[{label}] {count} replies streaming; measuring acks")
    delivered = time.monotonic()
    # probe rounds on a fixed schedule, so both bots answer as many of them whatever their acks take (rounds
    # spaced by each ack's time gave a bot that acks faster more requests to answer, and CPU to count)
    for n in itertools.count(1):
        for kind, ms in probe():
            acks.setdefault(kind, []).append(ms)
        if time.monotonic() - delivered >= PROBING and sum(map(len, acks.values())) >= 40:
            break
        time.sleep(max(0.0, delivered + n * PROBE_EVERY - time.monotonic()))
    rig.wait(lambda: rig.stops() - stops_before >= count, timeout=60, interval=0.02)
    wall = time.monotonic() - started
    cpu = rig.cpu() - cpu_before
    database_cpu = database.stop() if database else None
    completed = rig.stops() - stops_before
    parts = [peak_rss_mb(pid) for pid in pids(rig.bot)]
    rss_together = together.stop()
    rig.claude.default_script = None
    # where the wall time went: requests reaching Claude, streams ending, streams closed in Slack
    claude = rig.claude
    sent = sorted(claude.received_at[requests_before:requests_before + count])
    ended = sorted(claude.finished_at[i] for i in range(requests_before, requests_before + count)
                   if i in claude.finished_at)
    closed = sorted(c.at for c in rig.slack.calls_to("chat.stopStream"))[-count:]
    return {"acks": [ms for values in acks.values() for ms in values], "acks_by_kind": acks, "burst": burst,
            "wall": wall,
            "completed": completed, "count": count, "rss": sum(parts), "rss_parts": parts,
            "rss_together": rss_together, "cpu": cpu,
            "database_cpu": database_cpu,
            "delivery": delivered - started, "last_request": sent[-1] - started,
            "last_stream_end": ended[-1] - started, "last_close": closed[-1] - started,
            "workspaces": len({team.id for team, _, _ in roots}),
            "ratelimited": [f"{r.method} {r.why}" for r in rig.slack.refusals if r.error == "ratelimited"]}


def one_streamed_reply(rig: Rig, channel: str, root: str) -> dict:
    """Figure 5: every Slack call of one reply streamed over 10 s; first token → first visible text."""
    time.sleep(0.3)  # the thread's opening work is over
    rig.claude.script(Script(text="A thoughtful streamed answer. " * 60, chunks=50, chunk_delay=0.2))
    calls_before, requests_before, stops_before = len(rig.slack.calls), len(rig.claude.requests), rig.stops()
    rig.mention(channel, "stream please", thread_ts=root)
    rig.wait(lambda: rig.stops() > stops_before, timeout=30, interval=0.01)
    time.sleep(0.3)  # any call after the stream closed counts too
    calls = rig.slack.calls[calls_before:]
    start = next(c for c in calls if c.method == "chat.startStream")
    return {"calls": len(calls), "methods": sorted({c.method for c in calls}),
            "by_method": {m: sum(c.method == m for c in calls) for m in sorted({c.method for c in calls})},
            "first_visible": start.at - rig.claude.first_delta_at[-1],
            "stream": rig.claude.finished_at[requests_before] - rig.claude.received_at[requests_before]}
