"""Threadfork's figures. A reply is finished when the bot's database holds no answer waiting or
being written (`settle`); the bench reads that database, never the bot's memory."""
from __future__ import annotations

import json
from contextlib import contextmanager
from pathlib import Path

from sqlalchemy import create_engine, text

from tests.fakes.anthropic_api import FakeAnthropic, Script
from tests.fakes.slack_api import FakeSlack
from tests.fakes.samples import png
from tests.harness import answering

from .load import one_streamed_reply, spread, stream_replies
from .rig import Rig, limited, progress, unlimited
from .seed import populate

SIZES = (10, 100, 1000)


class Threadfork:
    def __init__(self, rig: Rig, label: str, quick: bool):
        self.rig, self.label, self.quick = rig, label, quick
        self.db = create_engine(rig.database_url)

    def close(self) -> None:
        self.db.dispose()

    @classmethod
    @contextmanager
    def on_fresh_fakes(cls, raw: dict, tmp: Path, url: str, label: str, quick: bool, **settings):
        """A bot on fakes of its own: what an earlier bot's traffic left in the fakes (the calls and posts they
        keep and scan) weighs on no later figure. Its `conversations.*` reads and model turns are added to
        `raw` (figure 6)."""
        slack, claude = unlimited(FakeSlack().start()), FakeAnthropic().start()
        bench = None
        try:
            bench = cls(Rig(slack, claude, tmp, url, label, **settings), label, quick)
            yield bench
        finally:
            if bench is not None:
                bench.rig.stop()
                bench.close()
            raw["reads"] += len([c for c in slack.calls if c.method.startswith("conversations.")])
            raw["turns"] += len(claude.requests)
            slack.stop()
            claude.stop()

    def settle(self, timeout: float = 60.0) -> None:
        """Wait until no answer is waiting or being written (read from the bot's database)."""
        # a table scan: polled gently, so the bench process does not steal the fakes' time
        self.rig.wait(lambda: not answering(self.db), timeout=timeout, interval=0.01)

    def answered(self, channel: str, said: str, thread_ts: str | None = None) -> None:
        """Send a message and wait until its answer is complete."""
        requests = len(self.rig.claude.requests)
        self.rig.mention(channel, said, thread_ts=thread_ts)
        self.rig.wait(lambda: len(self.rig.claude.requests) > requests)
        self.settle()

    def channel(self, size: int) -> str:
        return f"C{self.label[:2].upper()}{size}"

    def overhead(self) -> dict:
        """Figure 1: signed delivery → model request sent, plus last token → the turn's final Slack
        call; and the bot's CPU time per reply. Sizes take turns, round after round, so a drift in the
        machine's speed hits all alike."""
        rig, samples = self.rig, 15 if self.quick else 40
        for size in SIZES:
            populate(rig.database_url, self.channel(size), size)
        latency: dict[int, list[float]] = {size: [] for size in SIZES}
        cpu: dict[int, list[float]] = {size: [] for size in SIZES}
        for n in range(samples + 3):
            progress(f"[{self.label}] overhead at 10 / 100 / 1,000 turns: round {n + 1}/{samples + 3}")
            for size in SIZES:
                index, calls = len(rig.claude.requests), len(rig.slack.calls)
                rig.claude.script(Script(text=f"ok {n}", chunks=1))
                cpu_before = rig.cpu()
                ts, sent = rig.mention(self.channel(size), f"turn {n}")
                rig.wait(lambda: len(rig.claude.requests) > index)
                self.settle()
                used = rig.cpu() - cpu_before
                inbound = rig.claude.received_at[index] - sent
                outbound = max(c.at for c in rig.slack.calls[calls:]) - rig.claude.finished_at[index]
                if n >= 3:  # warm-up
                    latency[size].append((inbound + outbound) * 1000)
                    cpu[size].append(used * 1000)
        return {"latency": latency, "cpu": cpu}

    def fork_cost(self) -> dict:
        """Figure 2: /fork on a 1,000-turn parent against a 10-turn parent (delivery → root posted),
        alternating between the two."""
        rig, sizes, samples = self.rig, (10, 1000), 10 if self.quick else 40
        results: dict[int, list[float]] = {size: [] for size in sizes}
        for n in range(samples):
            progress(f"[{self.label}] /fork on a 10- and a 1,000-turn parent: {n + 1}/{samples}")
            for size in sizes:
                channel = self.channel(size)
                before = len(rig.roots(channel))
                started, _ = rig.slash("/fork", "--inherit", channel)
                root = rig.wait(lambda: rig.roots(channel)[before:])
                results[size].append((root[0].created - started) * 1000)
        return results

    def nested_fork_cost(self) -> dict:
        """Figure 2 for a fork of a fork of a fork on the 1,000-turn parent: `@Threadfork fork` in a
        depth-2 fork's thread (delivery → the depth-3 root posted), alternating with `/fork` on the
        channel itself; and the depth-3 fork's first request's reuse of its parent fork's cache."""
        rig, channel, samples = self.rig, self.channel(1000), 10 if self.quick else 40
        top = self.new_root(channel, lambda: rig.slash("/fork", "--inherit", channel))
        self.answered(channel, "explore the options", thread_ts=top)
        middle = self.new_root(channel, lambda: rig.mention_in_thread(channel, "fork --inherit", top))
        self.answered(channel, "go deeper", thread_ts=middle)
        results: dict[str, list[float]] = {"depth 1": [], "depth 3": []}
        for n in range(samples):
            progress(f"[{self.label}] a depth-3 fork and a channel fork on a 1,000-turn parent: {n + 1}/{samples}")
            for depth, opening in (("depth 1", lambda: rig.slash("/fork", "--inherit", channel)[0]),
                                   ("depth 3", lambda: rig.mention_in_thread(channel, "fork --inherit", middle))):
                before = len(rig.roots(channel))
                started = opening()
                root = rig.wait(lambda: rig.roots(channel)[before:])
                results[depth].append((root[0].created - started) * 1000)
        parent_last = rig.claude.requests[-1]
        first = len(rig.claude.requests)
        self.new_root(channel, lambda: rig.mention_in_thread(channel, "fork --inherit what about indexes?", middle))
        rig.wait(lambda: len(rig.claude.requests) > first)
        self.settle()
        return {**results, "cache": cache_reuse(parent_last, rig.claude.requests[first])}

    def new_root(self, channel: str, opening) -> str:
        """Open a fork; its root's ts, once the bot has filed it (the root is posted a moment before it is
        known as the fork's, and a reply sent in between would be chatter to the bot)."""
        before = len(self.rig.roots(channel))
        opening()
        ts = self.rig.wait(lambda: self.rig.roots(channel)[before:])[0].ts
        self.rig.wait(lambda: self.filed(ts))
        return ts

    def filed(self, ts: str) -> bool:
        """The bot knows the message as one of a fork's (a read of its database of its own, each time)."""
        with self.db.connect() as conn:
            return conn.execute(text("SELECT 1 FROM messages WHERE ts = :ts"), {"ts": ts}).first() is not None

    def load(self) -> dict:
        """Figures 3 and 4: 200 fork replies streaming for 5 s each; acks of events and slash
        commands measured meanwhile."""
        with limited(self.rig.slack):
            return self._load()

    def _load(self) -> dict:
        rig, count = self.rig, 50 if self.quick else 200
        label = "LOAD" + "".join(c for c in self.label.upper() if c.isalnum())[:6]
        roots = []
        for n, (team, channel) in enumerate(spread(rig, count, label)):
            progress(f"[{self.label}] opening {count} forks: {n + 1}/{count}")
            before = len(rig.roots(channel))
            rig.slash("/fork", "--fresh", channel, team=team)
            roots.append((team, channel, rig.wait(lambda: rig.roots(channel)[before:])[0].ts))
        team, channel, _ = roots[0]

        def probe():
            return [("event", rig.chatter_ack_ms(channel, team)),
                    ("slash", rig.slash("/fork", "help", channel, team=team)[1] * 1000)]

        return stream_replies(rig, roots, probe, self.label)

    def stream(self) -> dict:
        """Figure 5: Slack calls for a 10-s streamed fork reply; first token → first visible text."""
        self.rig.slash("/fork", "--fresh", "CSTREAM")
        root = self.rig.wait(lambda: self.rig.roots("CSTREAM"))[0].ts
        progress(f"[{self.label}] a 10-s streamed reply")
        return one_streamed_reply(self.rig, "CSTREAM", root)

    def token_economy_and_cache(self) -> dict:
        """Figures 7 and 8: an 80K-token fork off a 30K-token parent; the fork's prompt-cache reuse."""
        rig, channel = self.rig, "CECONOMY"
        words = "The parent conversation states facts and constraints at some length. "
        rig.claude.default_script = None
        for n in range(10):  # ~30K tokens of real parent text (the fake counts 4 characters a token)
            progress(f"[{self.label}] token economy: parent turn {n + 1}/10")
            rig.claude.script(Script(text=f"reply {n}: " + words * 80))
            self.answered(channel, f"point {n}: " + words * 90)
        parent_before = rig.claude.requests[-1]
        first_fork_request = len(rig.claude.requests)
        rig.slash("/fork", "--inherit explore the options", channel)
        root = rig.wait(lambda: rig.roots(channel))[0].ts
        rig.wait(lambda: len(rig.claude.requests) > first_fork_request)
        self.settle()
        fork_first = rig.claude.requests[first_fork_request]
        burned = n = 0
        while burned < 80_000:
            n += 1
            progress(f"[{self.label}] token economy: fork burned {burned:,} tokens")
            rig.claude.script(Script(text=f"exploration {n}: " + words * 40))
            self.answered(channel, f"idea {n}", thread_ts=root)
            burned = self.fork_burn(channel)
        rig.claude.script(Script(text="Decision and rationale. " * 400))  # ~2.4K-token summary
        rig.bot.event({"type": "reaction_added", "user": "UBENCH01", "reaction": "white_check_mark",
                       "item": {"type": "message", "channel": channel, "ts": root}, "event_ts": rig.next_ts()},
                      f"EvMERGE{root}")
        rig.wait(lambda: [p for p in rig.slack.posts(channel, top_level=True) if "merged fork" in p.get("text", "")])
        self.answered(channel, "what did the fork decide?")
        after = rig.claude.requests[-1]
        return {"parent": len(json.dumps(parent_before["messages"])) // 4, "burned": burned,
                "after": len(json.dumps(after["messages"])) // 4, "cache": cache_reuse(parent_before, fork_first)}

    def images(self) -> dict:
        """Figure 10: a parent that holds 20 shared images (uploaded once, sent by Files API id): the
        time the bot adds to a turn, and the inherited fork's prompt-cache reuse."""
        rig, channel, samples = self.rig, "CIMAGES", 15 if self.quick else 40
        rig.claude.default_script = None
        for n in range(20):
            progress(f"[{self.label}] a parent with 20 images: image {n + 1}/20")
            shot = rig.slack.share_file(f"screenshot-{n}.png", png(1280, 800), "image/png", "png")
            requests = len(rig.claude.requests)
            rig.mention(channel, f"what does screenshot {n} show?", files=[shot])
            rig.wait(lambda: len(rig.claude.requests) > requests)
            self.settle()
        latency = []
        for n in range(samples + 3):
            progress(f"[{self.label}] a parent with 20 images: turn {n + 1}/{samples + 3}")
            index, calls = len(rig.claude.requests), len(rig.slack.calls)
            rig.claude.script(Script(text=f"ok {n}", chunks=1))
            ts, sent = rig.mention(channel, f"turn {n}")
            rig.wait(lambda: len(rig.claude.requests) > index)
            self.settle()
            inbound = rig.claude.received_at[index] - sent
            outbound = max(c.at for c in rig.slack.calls[calls:]) - rig.claude.finished_at[index]
            if n >= 3:
                latency.append((inbound + outbound) * 1000)
        parent = rig.claude.requests[-1]
        first = len(rig.claude.requests)
        rig.slash("/fork", "--inherit which screenshot matters", channel)
        rig.wait(lambda: len(rig.claude.requests) > first)
        self.settle()
        images = sum(1 for m in parent["messages"] for b in m["content"] if b["type"] == "image")
        return {"latency": latency, "images": images, "uploads": len(rig.claude.files.uploads),
                "cache": cache_reuse(parent, rig.claude.requests[first])}

    def fork_burn(self, channel: str) -> int:
        with self.db.connect() as conn:
            return int(conn.execute(text(
                "SELECT COALESCE(SUM(t.input_tokens + t.output_tokens + t.cache_read_tokens + t.cache_write_tokens), 0) "
                "FROM turns t JOIN sessions s ON s.id = t.session_id WHERE s.kind = 'fork' AND s.channel_id = :c"
            ), {"c": channel}).scalar())


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
