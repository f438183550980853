"""The bench's tables, from its raw measurements: Threadfork against its targets, and Threadfork
against the baseline bot (ratios are Threadfork ÷ baseline: below 1, Threadfork uses less)."""
from __future__ import annotations

import re
import statistics
from pathlib import Path

from .measure import percentile
from .replicas import reach as replicas_reach

THREADFORK = ("sqlite", "postgresql")
BURST_GATE = {"sqlite": 150, "postgresql": 250}  # ms, the p99 of figure 3's burst acks (issue 35)
README_MARKS = ("<!-- bench:versus -->", "<!-- /bench:versus -->")
TARGET_MARKS = ("<!-- bench:targets -->", "<!-- /bench:targets -->")
REPLICA_MARKS = ("<!-- bench:replicas -->", "<!-- /bench:replicas -->")


def targets(r: dict) -> str:
    lines = ["| # | figure | measured | target | met |", "|---|---|---|---|---|"]

    def row(number, name, measured, target, met):
        lines.append(f"| {number} | {name} | {measured} | {target} | {'yes' if met else '**no**'} |")

    for label in [k for k in THREADFORK if k in r]:
        o, f, load = r[label]["overhead"]["latency"], r[label]["fork"], r[label]["load"]
        med = {s: statistics.median(v) for s, v in o.items()}
        p99 = {s: percentile(v, 99) for s, v in o.items()}
        tag = "" if label == "sqlite" else " (PostgreSQL)"
        row(1 if label == "sqlite" else 9, f"overhead per turn{tag}",
            " · ".join(f"{s:,} turns: median {med[s]:.1f} ms, p99 {p99[s]:.1f} ms" for s in (10, 100, 1000))
            + f" · 1,000/10 median ratio {med[1000] / med[10]:.2f}",
            "median ≤ 10 ms at 10 and 1,000 turns; p99 ≤ 50 ms at 1,000; ratio ≤ 3",
            med[10] <= 10 and med[1000] <= 10 and p99[1000] <= 50 and med[1000] / med[10] <= 3)
        fm = {s: statistics.median(v) for s, v in f.items()}
        row(2 if label == "sqlite" else 9, f"`/fork` cost{tag}",
            f"10 turns: median {fm[10]:.1f} ms · 1,000 turns: median {fm[1000]:.1f} ms · ratio {fm[1000] / fm[10]:.2f}",
            "ratio ≤ 1.5", fm[1000] / fm[10] <= 1.5)
        if "nested" in r[label]:
            n = r[label]["nested"]
            d1, d3, c = statistics.median(n["depth 1"]), statistics.median(n["depth 3"]), n["cache"]
            row(2 if label == "sqlite" else 9, f"a fork of a fork of a fork{tag}",
                f"1,000-turn parent: depth 3 median {d3:.1f} ms vs depth 1 median {d1:.1f} ms, ratio {d3 / d1:.2f}; "
                f"its first request shares {c['shared_share']:.1%} of its input with its parent fork's cached prefix",
                "ratio ≤ 1.5; byte-identical prefix, ≥ 90 %",
                d3 / d1 <= 1.5 and c["identical"] and c["shared_share"] >= 0.9)
        row(3 if label == "sqlite" else 9, f"ack while {load['count']} replies stream{tag}",
            f"median {statistics.median(load['acks']):.1f} ms, p99 {percentile(load['acks'], 99):.1f} ms "
            f"({len(load['acks'])} acks)", "p99 ≤ 100 ms", percentile(load["acks"], 99) <= 100)
        gate = BURST_GATE[label]
        row(3 if label == "sqlite" else 9, f"acks of a burst of {load['count']} deliveries{tag}",
            f"median {statistics.median(load['burst']):.1f} ms, p99 {percentile(load['burst'], 99):.1f} ms",
            f"p99 ≤ {gate} ms", percentile(load["burst"], 99) <= gate)
        row(4 if label == "sqlite" else 9, f"concurrent replies and RSS{tag}",
            f"{load['completed']}/{load['count']} complete in {load['wall']:.2f} s wall (delivering them took "
            f"{load['delivery']:.2f} s; last model request {load['last_request']:.2f} s, last stream ended "
            f"{load['last_stream_end']:.2f} s, last closed in Slack {load['last_close']:.2f} s); "
            f"peak RSS {load['rss']:.0f} MB, {load['rss'] / load['count'] * 1000:.0f} KB per answer in flight"
            + (f"; CPU per reply {load['cpu'] / load['count'] * 1000:.1f} ms, PostgreSQL's "
               f"{load['database_cpu'] / load['count'] * 1000:.1f} ms" if load.get("database_cpu") is not None else ""),
            "all within 6.5 s, none lost; RSS ≤ 400 MB",
            load["completed"] == load["count"] and load["wall"] <= 6.5 and load["rss"] <= 400)
    if "sqlite, 2 processes" in r:
        load = r["sqlite, 2 processes"]["load"]
        row(4, "concurrent replies and RSS (SQLite, THREADFORK_PROCESSES=2)",
            f"{load['completed']}/{load['count']} complete in {load['wall']:.2f} s wall (delivering them took "
            f"{load['delivery']:.2f} s; last model request {load['last_request']:.2f} s); "
            f"peak RSS {' + '.join(f'{p:.0f}' for p in load['rss_parts'])} = {load['rss']:.0f} MB "
            "(gunicorn master + workers, each its own peak: pages shared since the fork count in each); together "
            f"at most {load['rss_together']:.0f} MB (their proportional set sizes summed, sampled every 0.1 s)",
            "all within 6.5 s, none lost; together ≤ 400 MB",
            load["completed"] == load["count"] and load["wall"] <= 6.5 and load["rss_together"] <= 400)
    if "stream" in r:
        s = r["stream"]
        row(5, "Slack calls and first token",
            f"{s['calls']} Slack calls for a {s['stream']:.1f}-s streamed reply ({', '.join(s['methods'])}); "
            f"first token → first visible text {s['first_visible'] * 1000:.0f} ms",
            "≤ 12 calls; ≤ 50 ms", s["calls"] <= 12 and s["first_visible"] <= 0.05)
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
    if "day" in r:
        cost = {name: run["usage"]["cost_micros"] / 1e6 for name, run in r["day"]["runs"].items()}
        row(11, "a team's day, priced", " · ".join(f"{name} ${cost[name]:.2f}" for name, _ in DAY_ROWS
                                                     if name in cost),
            "`auto` ≤ 1.05 × min(`5m`, `1h`) and ≤ 0.6 × `5m`",
            cost["auto"] <= 1.05 * min(cost["5m"], cost["1h"]) and cost["auto"] <= 0.6 * cost["5m"])
    if "replicas" in r:
        two, reach = r["replicas"]["two"], replicas_reach(r["replicas"])
        row(12, "two replicas on one PostgreSQL, saturated",
            f"{two['overall']:.0f} turns/s ({r['replicas']['one']['overall']:.0f} with one replica); per turn "
            f"{reach['replica_ms']:.1f} ms of the replicas' CPU, {reach['database_ms']:.1f} ms of PostgreSQL's: one "
            f"database core serves ~{reach['per_database_core']:.0f} turns/s, "
            f"~{reach['replicas_per_database_core']:.1f} busy replica cores; {reach['connections']} connections",
            "reported (docs/production.md works out the reach)", True)
    if "images" in r:
        i = r["images"]
        med, p99 = statistics.median(i["latency"]), percentile(i["latency"], 99)
        c = i["cache"]
        row(10, "a parent with 20 images", f"overhead per turn median {med:.1f} ms, p99 {p99:.1f} ms "
            f"({i['images']} images in each request, {i['uploads']} uploads in all); the inherited fork's first "
            f"request shares {c['shared_share']:.1%} of its input with the parent's cached prefix",
            "as figures 1 and 8: median ≤ 10 ms, p99 ≤ 50 ms; ≥ 90 %",
            med <= 10 and p99 <= 50 and c["identical"] and c["shared_share"] >= 0.9)
    return "\n".join(lines)


def versus(r: dict) -> str:
    """Figures 1, 3, 4 and 5 side by side: baseline, Threadfork on each database, their ratios."""
    if "baseline" not in r:
        return ""
    # each bot's measurements; Threadfork's figure 5 was measured on SQLite only
    bots = {k: {**r[k], **({"stream": r["stream"]} if k == "sqlite" and "stream" in r else {})}
            for k in THREADFORK if k in r}
    base = r["baseline"]
    lines = ["| # | figure | baseline | " + " | ".join(
        f"Threadfork ({'SQLite' if k == 'sqlite' else 'PostgreSQL'}) | ratio" for k in bots) + " |",
        "|---|---|---:|" + "---:|---:|" * len(bots)]

    def row(number, name, measure, unit, decimals):
        def shown(value):
            return f"{value:,.{decimals}f} {unit}".strip()
        cells = [shown(measure(base))]
        for bot in bots.values():
            try:
                value = measure(bot)
            except KeyError:
                cells += ["—", "—"]
                continue
            cells += [shown(value), ratio(value, measure(base))]
        lines.append(f"| {number} | {name} | " + " | ".join(cells) + " |")

    for size in (10, 100, 1000):
        row(1, f"CPU time per reply, {size:,}-turn history (mean of {len(base['overhead']['cpu'][size])})",
            lambda x, size=size: statistics.fmean(x["overhead"]["cpu"][size]), "ms", 1)
    for size in (10, 1000):
        row(1, f"time the bot adds to a turn (as in figure 1), median, {size:,}-turn history",
            lambda x, size=size: statistics.median(x["overhead"]["latency"][size]), "ms", 1)
    count = base["load"]["count"]
    row(3, f"event ack p99 while {count} replies stream (events only)",
        lambda x: percentile(x["load"]["acks_by_kind"]["event"], 99), "ms", 1)
    row(3, f"ack p99 of a burst of {count} deliveries (each thread's message, sent at once by 32 senders)",
        lambda x: percentile(x["load"]["burst"], 99), "ms", 1)
    row(4, f"wall time, {count} concurrent 5-s thread replies", lambda x: x["load"]["wall"], "s", 2)
    row(4, "peak RSS", lambda x: x["load"]["rss"], "MB", 0)
    row(4, "CPU time under that load ÷ replies (the acks measured meanwhile included)",
        lambda x: x["load"]["cpu"] / x["load"]["count"] * 1000, "ms", 1)
    row(5, "Slack calls, one 10-s streamed reply", lambda x: x["stream"]["calls"], "", 0)
    row(5, "first token → first visible text", lambda x: x["stream"]["first_visible"] * 1000, "ms", 0)
    return "\n".join(lines)


def ratio(value: float, base: float) -> str:
    if not base:
        return "—"
    return f"{value / base:.2f}" if value / base >= 0.01 else f"{value / base:.1g}"


def update_readme(readme: Path, table: str) -> None:
    """Replace the comparison table between the page's marks (if it has them) with `table`."""
    text = readme.read_text()
    start, end = README_MARKS
    if start in text and end in text:
        readme.write_text(re.sub(re.escape(start) + ".*?" + re.escape(end), lambda _: f"{start}\n{table}\n{end}",
                                 text, flags=re.S))


DAY_MARKS = ("<!-- bench:day -->", "<!-- /bench:day -->")
DAY_ROWS = (("auto", "Threadfork, `THREADFORK_CACHE_TTL=auto` (the default)"),
            ("5m", "Threadfork, `5m` (every breakpoint the API's default)"),
            ("1h", "Threadfork, `1h`"),
            ("inline", "Threadfork, `auto`, every exploration asked in the channel (no forks)"),
            ("memory", "Threadfork, `auto`, the same day with memory writes (a fact remembered after three turns "
                       "and after each merge)"),
            ("baseline", "the baseline bot (no prompt caching; a thread sees only its own messages)"))


def day_table(raw: dict) -> str:
    """Figure 11: what the day cost, run by run, and the issue's two bars for `auto`."""
    runs = raw["runs"]
    cost = {name: run["usage"]["cost_micros"] / 1e6 for name, run in runs.items()}
    steps = raw["steps"]
    lines = [f"One seeded day (seed {raw['seed']}, {raw['hours']} hours) in a channel whose conversation already "
             f"held {raw['history']} exchanges: {steps['ask']} turns in the channel, "
             f"{steps['open']} forks with {steps['turn']} turns of their own, {steps['merge']} merged, "
             f"{steps['abandon']} abandoned; the default model's rates (claude-sonnet-5-5: $2 / $10 per MTok, "
             "cache reads $0.10, writes $2.50 for 5 minutes and $4 for an hour). Estimated from the usage the fake "
             "Anthropic reported, as the bot's own figures are.", "",
             "| run | model requests | input | cache reads | cache writes 5m / 1h | output | cost | ÷ `5m` |",
             "|---|---:|---:|---:|---:|---:|---:|---:|"]
    for name, label in DAY_ROWS:
        if name not in runs:  # a run from before that row existed
            continue
        run = runs[name]
        u = run["usage"]
        hour = u["cache_write_1h_tokens"]
        lines.append(f"| {label} | {run['requests']} | {u['input_tokens']:,} | {u['cache_read_tokens']:,} | "
                     f"{u['cache_write_tokens'] - hour:,} / {hour:,} | {u['output_tokens']:,} | "
                     f"${cost[name]:.2f} | {cost[name] / cost['5m']:.2f} |")
    if "memory" in cost:
        lines += ["", f"With {steps.get('remember', 0)} memory writes the same day cost ${cost['memory']:.2f} against "
                      f"${cost['auto']:.2f} without ({cost['memory'] / cost['auto']:.2f}×): on this model each "
                      "write rewrites the channel conversation's cached prefix once; running forks keep theirs "
                      "(docs/memory.md)."]
    opus = "claude-opus-4-8"
    if opus in cost and f"{opus} memory" in cost:
        lines += ["", f"On Claude Opus 4.8 ($5 / $25 per MTok), which takes mid-conversation system messages, the same "
                      f"day cost ${cost[f'{opus} memory']:.2f} with the writes against ${cost[opus]:.2f} without "
                      f"({cost[f'{opus} memory'] / cost[opus]:.2f}×): an entry saved while the conversation runs "
                      "reaches it in a system message after its cached prefix, which stays as it was."]
    cheaper = min(cost["5m"], cost["1h"])
    lines += ["", f"`auto` ≤ 1.05 × the cheaper of `5m` and `1h` (${1.05 * cheaper:.2f}): "
                  f"{'yes' if cost['auto'] <= 1.05 * cheaper else '**no**'}; `auto` ≤ 0.6 × `5m` "
                  f"(${0.6 * cost['5m']:.2f}): {'yes' if cost['auto'] <= 0.6 * cost['5m'] else '**no**'}."]
    return "\n".join(lines)


def replace_marked(page: Path, marks: tuple[str, str], text: str) -> None:
    """Put `text` between the page's two marks."""
    content = page.read_text()
    start, end = marks
    if start in content and end in content:
        page.write_text(re.sub(re.escape(start) + ".*?" + re.escape(end), lambda _: f"{start}\n{text}\n{end}",
                               content, flags=re.S))
