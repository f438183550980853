"""Figure 11: a team's working day in one channel, priced.

A seeded script (SEED) of one day in a channel already in use (its conversation so far, `HISTORY`
exchanges, is where the day starts): the channel's conversation in bursts of quick turns with 10–50-minute
pauses, three forks with bursts of their own, two merged (✅) and one abandoned (❌). It is played through a
real bot process on fresh fakes per run, the fake Anthropic's prompt cache on a clock the bench sets to
each step's minute (people's Slack timestamps carry the same minute): Threadfork with
THREADFORK_CACHE_TTL=auto, 5m and 1h; Threadfork again with every exploration asked in the channel's
conversation (inline, no forks); and the bench's baseline bot (no prompt caching; a thread is a
conversation of its own messages); and Threadfork (`auto`) on the same day with memory writes: someone
remembers a short fact in the channel after three of its bursts and after each merge (`@Threadfork remember`,
issue 37), which every later request of the channel then carries. Each request's reported usage is priced with
bot/eval/pricing.py (the bot's own table, bot/domain/spend.py).
Nothing here is asserted: the figure is a measurement.
"""
from __future__ import annotations

import random
from dataclasses import asdict, dataclass, field
from pathlib import Path

from bot.domain.model import Usage
from bot.eval.pricing import priced
from tests.fakes.anthropic_api import FakeAnthropic, Script
from tests.fakes.slack_api import FakeSlack

from .rig import Rig, progress, unlimited
from .seed import populate_pairs
from .threadfork import Threadfork

SEED = 11
HISTORY = 20  # exchanges in the channel before the day (the baseline is sent them; they are not priced)
DAY_START = 1_790_000_000.0  # 09:00 of the bench's day (ts apart from every other rig's)
CHANNEL = "CDAY"
WORDS = ("the launch plan billing migration support rota beta cohort pricing tiers invoices churn onboarding "
         "latency budget risk owner deadline customer feedback dashboard rollout rollback contract legal "
         "security review metrics retention forecast hiring roadmap dependency vendor outage incident").split()


@dataclass(frozen=True)
class Step:
    minute: float  # after 09:00
    kind: str  # ask (the channel), open (/fork with its topic), turn (in a fork), merge, abandon, remember
    fork: int = 0
    text: str = ""
    answer: str = ""  # what Claude answers, or the summary


def prose(rng: random.Random, low: int, high: int) -> str:
    words, size = [], rng.randint(low, high)
    while sum(len(w) + 1 for w in words) < size:
        words.append(rng.choice(WORDS))
    return " ".join(words).capitalize() + "."


def history(seed: int = SEED) -> list[tuple[str, str]]:
    """The channel's conversation before the day: (what someone asked, what Claude answered)."""
    rng = random.Random(seed * 1000)
    return [(prose(rng, 200, 1200), prose(rng, 800, 3000)) for _ in range(HISTORY)]


def day(seed: int = SEED) -> list[Step]:
    """The day's steps in the order they happen."""
    rng = random.Random(seed)
    steps: list[Step] = []
    minute = 0.0
    opened_after = {1: 1, 2: 3, 3: 4}  # a fork opens in the pause after these parent bursts
    for burst in range(10):
        for _ in range(rng.randint(3, 5)):
            steps.append(Step(minute, "ask", text=prose(rng, 200, 1200), answer=prose(rng, 800, 3000)))
            minute += rng.uniform(0.5, 3.0)
        pause = rng.uniform(10, 50)
        for number, after in opened_after.items():
            if after == burst:
                steps += fork_steps(rng, number, minute + 1)
        minute += pause
    return sorted(steps, key=lambda s: s.minute)


def fork_steps(rng: random.Random, number: int, start: float) -> list[Step]:
    """A fork opened at `start`: two bursts of quick turns with a meeting between, then merged or abandoned."""
    steps = [Step(start, "open", number, f"explore option {number}: " + prose(rng, 60, 160), prose(rng, 800, 2500))]
    minute = start
    for burst in range(2):
        minute += rng.uniform(15, 40) if burst else 0
        for _ in range(rng.randint(4, 7)):
            minute += rng.uniform(0.5, 2.0)
            steps.append(Step(minute, "turn", number, prose(rng, 100, 600), prose(rng, 800, 2500)))
    closing = "abandon" if number == 3 else "merge"
    steps.append(Step(minute + rng.uniform(2, 6), closing, number, answer=prose(rng, 1500, 3000)))
    return steps


REMEMBERED_AFTER_ASKS = (8, 20, 32)  # the channel's asks after which someone remembers a fact (and after merges)


def with_memory(steps: list[Step], seed: int = SEED) -> list[Step]:
    """The same day with memory writes: a short fact remembered in the channel a few seconds after three of its
    turns and after each merge."""
    rng = random.Random(seed * 7)
    out: list[Step] = []
    asks = 0
    for step in steps:
        out.append(step)
        asks += step.kind == "ask"
        if (step.kind == "ask" and asks in REMEMBERED_AFTER_ASKS) or step.kind == "merge":
            out.append(Step(step.minute + 0.1, "remember", text=prose(rng, 60, 160)))
    return sorted(out, key=lambda s: s.minute)


@dataclass
class Priced:
    run: str
    requests: int = 0
    usage: dict = field(default_factory=dict)

    @property
    def dollars(self) -> float:
        return self.usage.get("cost_micros", 0) / 1e6


def price(run: str, claude: FakeAnthropic, first: int = 0) -> Priced:
    """Every answered request's reported usage from request `first` on, priced at its model's rates."""
    total, answered = Usage(), 0
    for index, request in enumerate(claude.requests):
        reported = claude.usages.get(index)
        if reported is None or index < first:
            continue
        usage = Usage(reported["input_tokens"], reported["output_tokens"], reported.get("cache_read_input_tokens", 0),
                      reported.get("cache_creation_input_tokens", 0),
                      cache_write_1h_tokens=reported.get("cache_creation", {}).get("ephemeral_1h_input_tokens", 0))
        total += priced(request.get("model"), usage)
        answered += 1
    return Priced(run, answered, asdict(total))


def at(step: Step, index: int) -> tuple[float, str]:
    """The step's moment, and the ts of a message written then (unique: a millisecond per step)."""
    moment = DAY_START + step.minute * 60 + index / 1000
    return moment, f"{moment:.6f}"


def play_threadfork(tmp: Path, steps: list[Step], mode: str, inline: bool = False, label: str | None = None,
                    **settings) -> Priced:
    """`settings`: the bot's further settings (e.g. threadfork_model)."""
    label = label or ("inline" if inline else mode)
    slack, claude = unlimited(FakeSlack().start()), FakeAnthropic().start()  # one channel, back to back
    url = f"sqlite:///{tmp / f'day-{label}.db'}"
    populate_pairs(url, CHANNEL, history())
    rig = Rig(slack, claude, tmp, url, f"day-{label}", threadfork_cache_ttl=mode, **settings)
    bench = Threadfork(rig, f"day {label}", quick=False)
    roots: dict[int, str] = {}
    try:
        for index, step in enumerate(steps):
            progress(f"[figure 11, {label}] {step.kind} at 09:00 + {step.minute:.0f} min: {index + 1}/{len(steps)}")
            moment, ts = at(step, index)
            claude.cache.clock.fixed = moment
            if step.kind in ("merge", "abandon") and inline:
                continue
            if step.kind == "remember":  # no model call: the entry joins every later request's system content
                notes = len(remembered(rig))
                rig.mention(CHANNEL, f"remember {step.text}", ts=ts)
                rig.wait(lambda: len(remembered(rig)) > notes)
                bench.settle()
            elif step.kind == "ask" or (inline and step.kind in ("open", "turn")):
                claude.script(Script(text=step.answer))
                answered(bench, lambda: rig.mention(CHANNEL, step.text, ts=ts))
            elif step.kind == "open":
                claude.script(Script(text=step.answer))
                requests = len(claude.requests)
                roots[step.fork] = bench.new_root(CHANNEL, lambda: rig.slash("/fork", f"--inherit {step.text}",
                                                                             CHANNEL))
                rig.wait(lambda: len(claude.requests) > requests)
                bench.settle()
            elif step.kind == "turn":
                claude.script(Script(text=step.answer))
                answered(bench, lambda: rig.mention(CHANNEL, step.text, thread_ts=roots[step.fork], ts=ts))
            else:
                close(rig, bench, step, roots[step.fork])
        return price(label, claude)
    finally:
        rig.stop()
        bench.close()
        slack.stop()
        claude.stop()


def remembered(rig: Rig) -> list:
    return [p for p in rig.slack.posts(CHANNEL, top_level=True) if "remembered" in p.get("text", "")]


def answered(bench: Threadfork, send) -> None:
    requests = len(bench.rig.claude.requests)
    send()
    bench.rig.wait(lambda: len(bench.rig.claude.requests) > requests)
    bench.settle()


def close(rig: Rig, bench: Threadfork, step: Step, root: str) -> None:
    """✅ (the summary is one more request) or ❌ on the fork's root; done once the bot says so."""
    reaction = "white_check_mark" if step.kind == "merge" else "x"
    if step.kind == "merge":
        rig.claude.script(Script(text=step.answer))
    posts = len(rig.slack.posts(CHANNEL, top_level=True))
    rig.bot.event({"type": "reaction_added", "user": "UBENCH01", "reaction": reaction,
                   "item": {"type": "message", "channel": CHANNEL, "ts": root}, "event_ts": rig.next_ts()},
                  f"EvDAY{root}{reaction}")
    if step.kind == "merge":
        rig.wait(lambda: len(rig.slack.posts(CHANNEL, top_level=True)) > posts)
    else:
        rig.wait(lambda: any("abandoned" in m.get("text", "") for m in rig.slack.posts(CHANNEL, top_level=False)
                             if m.get("thread_ts") == root))
    bench.settle()


def play_baseline(tmp: Path, steps: list[Step]) -> Priced:
    """The same day for the baseline bot: the channel's turns at its top level, each fork a thread opened
    with a mention (its own messages only); it has nothing to merge or abandon."""
    slack, claude = unlimited(FakeSlack().start()), FakeAnthropic().start()  # one channel, back to back
    rig = Rig(slack, claude, tmp, "", "day-baseline", module="bench.baseline")
    roots: dict[int, str] = {}
    try:
        for n, (asked, answer) in enumerate(history()):  # its memory of the channel so far, the evening before
            progress(f"[figure 11, baseline] the channel so far: {n + 1}/{HISTORY}")
            claude.cache.clock.fixed = DAY_START - 86_400 + n * 60
            claude.script(Script(text=answer))
            rig.mention(CHANNEL, asked)
            rig.wait(lambda: (posts := rig.slack.posts(CHANNEL, top_level=True)) and posts[-1].shown == answer
                     and len(claude.finished_at) > n, interval=0.005)
        first = len(claude.requests)
        for index, step in enumerate(steps):
            progress(f"[figure 11, baseline] {step.kind} at 09:00 + {step.minute:.0f} min: {index + 1}/{len(steps)}")
            moment, ts = at(step, index)
            claude.cache.clock.fixed = moment
            if step.kind in ("merge", "abandon"):
                continue
            claude.script(Script(text=step.answer))
            requests = len(claude.requests)
            if step.kind == "ask":
                rig.mention(CHANNEL, step.text, ts=ts)
                rig.wait(lambda: (posts := rig.slack.posts(CHANNEL, top_level=True)) and posts[-1].shown == step.answer
                         and len(claude.finished_at) > requests, interval=0.005)
                continue
            stops = rig.stops()
            if step.kind == "open":
                roots[step.fork] = f"{moment - 0.5:.6f}"  # someone's message the thread hangs under
                rig.mention_in_thread(CHANNEL, step.text, roots[step.fork], ts=ts)
            else:
                rig.mention(CHANNEL, step.text, thread_ts=roots[step.fork], ts=ts)
            rig.wait(lambda: rig.stops() > stops and len(claude.requests) > requests, interval=0.005)
        return price("baseline", claude, first)
    finally:
        rig.stop()
        slack.stop()
        claude.stop()


OPUS_4_8 = "claude-opus-4-8"


def run(tmp: Path) -> dict:
    """Figure 11's raw figures: each run's requests and priced usage."""
    steps = day()
    runs = [play_threadfork(tmp, steps, mode) for mode in ("auto", "5m", "1h")]
    runs.append(play_threadfork(tmp, steps, "auto", inline=True))
    runs.append(play_threadfork(tmp, with_memory(steps), "auto", label="memory"))
    # the same pair on a model that takes mid-conversation system messages: a write costs only its own tokens
    runs.append(play_threadfork(tmp, steps, "auto", label=OPUS_4_8, threadfork_model=OPUS_4_8))
    runs.append(play_threadfork(tmp, with_memory(steps), "auto", label=f"{OPUS_4_8} memory", threadfork_model=OPUS_4_8))
    runs.append(play_baseline(tmp, steps))
    return {"seed": SEED, "history": HISTORY, "steps": {kind: sum(s.kind == kind for s in with_memory(steps))
                                    for kind in ("ask", "open", "turn", "merge", "abandon", "remember")},
            "hours": round(max(s.minute for s in steps) / 60, 1),
            "runs": {r.run: {"requests": r.requests, "usage": r.usage} for r in runs}}
