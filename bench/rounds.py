"""`python -m bench --only load`: figure 4 alone, Threadfork (SQLite) and the baseline side by side, round
after round in turn, so a drift of the machine's speed hits both alike. Each round opens fresh threads in
both bots (the first message of a fork is what figure 4 measures) and streams 200 replies (50 with
--quick); the table gives each round's CPU per reply, burst-ack p99 and wall time, and their medians."""
from __future__ import annotations

import statistics
import tempfile
from pathlib import Path

from tests.fakes.anthropic_api import FakeAnthropic
from tests.fakes.slack_api import FakeSlack

from .measure import percentile
from .rig import Rig, progress
from .threadfork import Threadfork
from .versus import Baseline


def run(rounds: int, quick: bool) -> list[dict]:
    """Each round: {'threadfork': load, 'baseline': load} as bench.load.stream_replies returns them."""
    tmp = Path(tempfile.mkdtemp(prefix="threadfork-rounds-"))
    fakes = [(FakeSlack().start(), FakeAnthropic().start()) for _ in range(2)]
    (slack, claude), (base_slack, base_claude) = fakes
    ours = Threadfork(Rig(slack, claude, tmp, f"sqlite:///{tmp / 'rounds.db'}", "sqlite"), "sqlite", quick)
    theirs = Baseline(Rig(base_slack, base_claude, tmp, "", "baseline", module="bench.baseline"), quick)
    results = []
    try:
        for n in range(rounds):
            progress(f"round {n + 1}/{rounds}")
            ours.label = theirs.label = f"r{n}"  # each round's threads in a channel of their own
            pair = [("threadfork", ours), ("baseline", theirs)]
            results.append({name: bot.load() for name, bot in (pair if n % 2 == 0 else pair[::-1])})
    finally:
        ours.rig.stop()
        ours.close()
        theirs.rig.stop()
        for s, c in fakes:
            s.stop()
            c.stop()
    progress("")
    return results


def table(results: list[dict]) -> str:
    def cpu(load):
        return load["cpu"] / load["count"] * 1000

    def burst(load):
        return percentile(load["burst"], 99)

    lines = ["| round | CPU per reply, Threadfork / baseline | ratio | burst ack p99, Threadfork / baseline | ratio "
             "| wall, Threadfork / baseline |", "|---|---|---|---|---|---|"]
    ratios = {"cpu": [], "burst": []}
    for n, r in enumerate(results, 1):
        t, b = r["threadfork"], r["baseline"]
        ratios["cpu"].append(cpu(t) / cpu(b))
        ratios["burst"].append(burst(t) / burst(b))
        lines.append(f"| {n} | {cpu(t):.1f} / {cpu(b):.1f} ms | {ratios['cpu'][-1]:.2f} | {burst(t):.0f} / "
                     f"{burst(b):.0f} ms | {ratios['burst'][-1]:.2f} | {t['wall']:.2f} / {b['wall']:.2f} s |")
    lines.append(f"| median | | {statistics.median(ratios['cpu']):.2f} | | {statistics.median(ratios['burst']):.2f} | |")
    # each bot's fake Slack keeps its refusals for the whole run: the last round's list holds them all
    spread = {name: (results[0][name].get("workspaces"), len(results[-1][name].get("ratelimited", [])))
              for name in ("threadfork", "baseline")}
    lines.append("\nWith Slack's rate limits on, the answers spread over " + ", ".join(
        f"{name}: {ws} workspaces, {limited} calls answered 429" for name, (ws, limited) in spread.items()) + ".")
    return "\n".join(lines)
