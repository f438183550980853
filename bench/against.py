"""`python -m bench --against REV [REV …]`: figure 1 for this checkout and for other revisions, side by side.

Each revision is checked out in a temporary git worktree and runs as its own `python -m bot` (PYTHONPATH = the
worktree, this checkout's virtualenv) on one pair of fakes shared by all; each database is seeded by its own
checkout's code. The checkouts' turns alternate round by round (the order reversed every other round), so a
drift of the machine's speed hits all alike; figure 1 is measured exactly as `Threadfork.overhead` measures it.
This is how a change is shown to cost little (or to gain): against the commit before it, in one run.
The running checkout (`this`) measured 1–4 % slower than a worktree of the same commit: for small differences,
name both sides as revisions and compare their rows.
"""
from __future__ import annotations

import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path

from sqlalchemy import create_engine

from tests.fakes.anthropic_api import FakeAnthropic, Script
from tests.fakes.slack_api import FakeSlack
from tests.harness import answering
from tests.processes import BotProcess, bot_env

from .rig import Rig, progress, unlimited

SIZES = (10, 1000)
METHODS = Path("tests") / "fakes" / "slack_spec" / "web_api_methods.json"
WARM_UP = 3
# how a checkout seeds its channels: bench/seed.py since 2026-12-01, the bench's own method before it
SEED = ("try:\n    from bench.seed import populate\nexcept ImportError:\n"
        "    from bench.__main__ import Bench\n    def populate(url, channel, turns): Bench.populate(None, url, channel, turns)\n"
        "populate({url!r}, {channel!r}, {turns})")


@dataclass
class Checkout:
    name: str
    path: Path
    number: int  # its channels' names
    rig: Rig | None = None
    engine: object = None

    def channel(self, size: int) -> str:
        return f"CAB{self.number}X{size}"


def run(root: Path, revisions: list[str], rounds: int) -> dict:
    """{(name, size): {"latency": [ms…], "cpu": [ms…]}} for this checkout ("this") and each revision."""
    tmp = Path(tempfile.mkdtemp(prefix="threadfork-against-"))
    checkouts = [Checkout("this", root, 0)]
    for number, revision in enumerate(revisions, 1):
        path = tmp / revision.replace("/", "_")
        subprocess.run(["git", "-C", str(root), "worktree", "add", "--detach", str(path), revision], check=True,
                       capture_output=True)
        checkouts.append(Checkout(revision, path, number))
        if not (path / "bench" / "seed.py").exists():
            slack_description(root, tmp)
    slack, claude = unlimited(FakeSlack().start()), FakeAnthropic().start()
    try:
        for checkout in checkouts:
            start(checkout, slack, claude, tmp)
        return measure(checkouts, slack, claude, rounds)
    finally:
        for checkout in checkouts:
            if checkout.rig:
                checkout.rig.bot.stop()
            if checkout.engine is not None:
                checkout.engine.dispose()
        slack.stop()
        claude.stop()
        for checkout in checkouts[1:]:
            subprocess.run(["git", "-C", str(root), "worktree", "remove", "--force", str(checkout.path)],
                           capture_output=True)


def slack_description(root: Path, beside: Path) -> None:
    """Checkouts from before 2026-12-01 seed through their bench, whose fake Slack reads Slack's OpenAPI
    description at import from a `shared/` folder beside the repository; a worktree here gets one made from the
    facts this repository keeps of it (tests/fakes/slack_spec/web_api_methods.json: every method and its
    required arguments), so nothing is read from outside the repository."""
    facts = json.loads((root / METHODS).read_text())
    methods = {**facts["methods"], **facts["newer_methods"]}
    paths = {f"/{method}": {"post": {"parameters": [{"name": name, "required": True} for name in required]}}
             for method, required in methods.items()}
    target = beside / "shared" / "slack" / "web-api.openapi.json"
    target.parent.mkdir(parents=True, exist_ok=True)
    target.write_text(json.dumps({"openapi": "3.0.0", "paths": paths}))


def start(checkout: Checkout, slack: FakeSlack, claude: FakeAnthropic, tmp: Path) -> None:
    url = f"sqlite:///{tmp / (checkout.path.name + '.db')}"
    env = bot_env(slack, claude, url, threadfork_sweep_interval="1h", threadfork_processes=1, log_level="WARNING")
    env["PYTHONPATH"] = str(checkout.path)
    workdir = tmp / f"{checkout.path.name}-run"
    workdir.mkdir()
    bot = BotProcess(workdir, env=env, name="bot")
    bot.wait_healthy(timeout=60)  # the bot migrates its database on start
    for size in SIZES:
        code = SEED.format(url=url, channel=checkout.channel(size), turns=size)
        subprocess.run([sys.executable, "-c", code], cwd=checkout.path, check=True,
                       env={**os.environ, "PYTHONPATH": str(checkout.path)})
    checkout.rig = Rig.__new__(Rig)  # a rig around a bot started with its own environment
    checkout.rig.slack, checkout.rig.claude, checkout.rig.database_url, checkout.rig.bot = slack, claude, url, bot
    checkout.rig.default, checkout.rig.module = slack.team(None), "bot"  # one workspace, SLACK_BOT_TOKEN's
    checkout.engine = create_engine(url)


def measure(checkouts: list[Checkout], slack: FakeSlack, claude: FakeAnthropic, rounds: int) -> dict:
    results = {(c.name, size): {"latency": [], "cpu": []} for c in checkouts for size in SIZES}
    for n in range(rounds + WARM_UP):
        progress(f"figure 1 side by side: round {n + 1}/{rounds + WARM_UP}")
        for size in SIZES:
            for checkout in (checkouts if n % 2 == 0 else checkouts[::-1]):
                rig = checkout.rig
                index, calls = len(claude.requests), len(slack.calls)
                claude.script(Script(text=f"ok {n}", chunks=1))
                cpu_before = rig.cpu()
                _, sent = rig.mention(checkout.channel(size), f"turn {n}")
                rig.wait(lambda: len(claude.requests) > index)
                rig.wait(lambda: not answering(checkout.engine), interval=0.01)
                time.sleep(0.05)  # the turn's last Slack call, and its CPU, are in
                inbound = claude.received_at[index] - sent
                outbound = max(c.at for c in slack.calls[calls:]) - claude.finished_at[index]
                if n >= WARM_UP:
                    results[(checkout.name, size)]["latency"].append((inbound + outbound) * 1000)
                    results[(checkout.name, size)]["cpu"].append((rig.cpu() - cpu_before) * 1000)
    progress("")
    return results


def table(results: dict, names: list[str]) -> str:
    """Medians per checkout and size, each with its ratio to the first revision named."""
    reference = names[1]
    lines = [f"| history | checkout | figure 1 median | ratio to {reference} | CPU per turn, median |",
             "|---|---|---:|---:|---:|"]
    for size in SIZES:
        base = statistics.median(results[(reference, size)]["latency"])
        for name in names:
            latency = statistics.median(results[(name, size)]["latency"])
            cpu = statistics.median(results[(name, size)]["cpu"])
            lines.append(f"| {size:,} turns | {name} | {latency:.2f} ms | {latency / base:.2f} | {cpu:.2f} ms |")
    return "\n".join(lines)
