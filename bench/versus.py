"""The baseline's figures 1, 3, 4 and 5, measured as Threadfork's are (bench/threadfork.py) with the
closest workload the baseline can run. It has no database and no slash commands, so:

- figure 1: its in-memory history is filled to 10 / 100 / 1,000 turns by sending it the same
  messages Threadfork's store is seeded with (`seed.question`, scripted `seed.answer`);
- figures 3–4: its threads are opened by an @-mention in a thread, not by /fork; the acks measured
  are of events only;
- one process: state in a dict cannot be shared between processes.

A top-level reply is finished when its final text is shown; a thread reply when its stream closed.
"""
from __future__ import annotations

from tests.fakes.anthropic_api import Script

from .load import one_streamed_reply, spread, stream_replies
from .rig import Rig, limited, progress
from .seed import answer, question

SIZES = (10, 100, 1000)


class Baseline:
    def __init__(self, rig: Rig, quick: bool):
        self.rig, self.quick, self.label = rig, quick, "baseline"

    def close(self) -> None:
        pass

    def reply_shown(self, channel: str, said: str, text: str) -> str:
        """Mention the bot at the channel's top level; wait until its reply shows `text` in full."""
        ts, sent = self.rig.mention(channel, said)
        self.rig.wait(lambda: (posts := self.rig.slack.posts(channel, top_level=True))
                      and posts[-1].shown == text, interval=0.005)
        return ts

    def open_thread(self, channel: str, team=None) -> str:
        """An @-mention in a thread of someone's message; returns the thread once answered."""
        root, stops = self.rig.next_ts(), self.rig.stops()
        self.rig.mention_in_thread(channel, "hello", root, team=team)
        self.rig.wait(lambda: self.rig.stops() > stops, interval=0.005)
        return root

    def overhead(self) -> dict:
        """Figure 1: CPU time per reply (and the same latency figure as Threadfork's), sizes in turn."""
        rig, samples = self.rig, 15 if self.quick else 40
        for size in SIZES:
            first = len(rig.claude.requests)
            for n in range(size // 2):
                progress(f"[baseline] filling a {size:,}-turn history: {2 * n + 2}/{size}")
                rig.claude.script(Script(text=answer(n)))
                self.reply_shown(f"CBL{size}", question(n), answer(n))
            # the fake keeps each request it parsed; ~300K dicts of history slow the bench's own GC
            rig.claude.requests[first:] = [{}] * (len(rig.claude.requests) - first)
        latency: dict[int, list[float]] = {size: [] for size in SIZES}
        cpu: dict[int, list[float]] = {size: [] for size in SIZES}
        for n in range(samples + 3):
            progress(f"[baseline] CPU per reply at 10 / 100 / 1,000 turns: round {n + 1}/{samples + 3}")
            for size in SIZES:
                index, calls = len(rig.claude.requests), len(rig.slack.calls)
                rig.claude.script(Script(text=f"ok {n}", chunks=1))
                cpu_before = rig.cpu()
                ts, sent = rig.mention(f"CBL{size}", f"turn {n}")
                rig.wait(lambda: (posts := rig.slack.posts(f"CBL{size}", top_level=True))
                         and posts[-1].shown == f"ok {n}" and index in rig.claude.finished_at,
                         interval=0.005)
                used = rig.cpu() - cpu_before
                inbound = rig.claude.received_at[index] - sent
                outbound = max(c.at for c in rig.slack.calls[calls:]) - rig.claude.finished_at[index]
                if n >= 3:  # warm-up
                    latency[size].append((inbound + outbound) * 1000)
                    cpu[size].append(used * 1000)
        return {"latency": latency, "cpu": cpu}

    def load(self) -> dict:
        """Figures 3 and 4: 200 thread replies streaming for 5 s each; event acks meanwhile."""
        with limited(self.rig.slack):
            return self._load()

    def _load(self) -> dict:
        count = 50 if self.quick else 200
        roots = []
        for n, (team, channel) in enumerate(spread(self.rig, count, "LOADBASE" + self.label.upper()[-2:])):
            progress(f"[baseline] opening {count} threads: {n + 1}/{count}")
            roots.append((team, channel, self.open_thread(channel, team)))
        team, channel, _ = roots[0]

        def probe():  # two events a round, as Threadfork gets an event and a slash command
            return [("event", self.rig.chatter_ack_ms(channel, team)), ("event", self.rig.chatter_ack_ms(channel, team))]

        return stream_replies(self.rig, roots, probe, self.label)

    def stream(self) -> dict:
        """Figure 5: Slack calls for a 10-s reply streamed into a thread."""
        root = self.open_thread("CSTREAMBASE")
        progress("[baseline] a 10-s streamed reply")
        return one_streamed_reply(self.rig, "CSTREAMBASE", root)
