"""`python -m bot.eval [--model M] [--scenario NAME]... [--repeat N] [--out PATH]`: the recall eval.

Exit status: 0 when every run finished, 1 when one failed (the runs done so far are still written),
2 when nothing could run (no key, a refused key, an unknown model or scenario).
"""
from __future__ import annotations

import argparse
import json
import logging
import sys
from datetime import datetime, timezone
from pathlib import Path

from ..domain.errors import ThreadforkError
from ..llm.claude import Claude
from .endpoint import EvalSettings, Refused, api_key, check
from .report import MEANINGLESS, render, summarise
from .runner import ARMS, EVERY_ARM, EvalFailed, run_arm
from .scenario import ScenarioError, available, load


def arguments(settings: EvalSettings) -> argparse.Namespace:
    parser = argparse.ArgumentParser(prog="python -m bot.eval", description=(
        "Play a scripted team conversation three ways — exploring in merged forks, inline in the parent, "
        "and not at all — against Claude's API, then grade the parent's recall."))
    parser.add_argument("--model", default=settings.threadfork_model,
                        help="model id (default: THREADFORK_MODEL, else %(default)s)")
    parser.add_argument("--scenario", action="append", metavar="NAME",
                        help=f"a shipped scenario ({', '.join(available())}) or a scenario .json file; "
                             "repeat the flag for several (default: every shipped one)")
    parser.add_argument("--repeat", type=int, default=1, metavar="N", help="runs of each arm (default: 1)")
    parser.add_argument("--arm", action="append", choices=EVERY_ARM, metavar="ARM",
                        help=f"an arm to play ({', '.join(EVERY_ARM)}); repeat the flag for several (default: "
                             f"{', '.join(ARMS)}). `memory`: forks whose conclusions are remembered at each merge, the "
                             "parent compacted before the questions")
    parser.add_argument("--out", type=Path, metavar="PATH",
                        help="where to write the JSON result (default: data/eval/recall-<UTC time>.json)")
    args = parser.parse_args()
    if args.repeat < 1:
        parser.error("--repeat must be at least 1")
    return args


def main() -> int:
    logging.basicConfig(level=logging.WARNING, format="%(levelname)s %(name)s: %(message)s")
    settings = EvalSettings()
    args = arguments(settings)
    try:
        scenarios = [load(name) for name in (args.scenario or available())]
        key = api_key(settings)
        endpoint = check(settings, args.model)
    except (Refused, ScenarioError) as error:
        print(f"bot.eval: {error}", file=sys.stderr)
        return 2
    out = args.out or Path("data") / "eval" / f"recall-{datetime.now(timezone.utc):%Y%m%dT%H%M%SZ}.json"
    if endpoint.offline:
        print(MEANINGLESS, file=sys.stderr)

    runs, error = [], None
    try:
        for scenario in scenarios:
            for repeat in range(1, args.repeat + 1):
                for arm in args.arm or ARMS:
                    claude = Claude(api_key=key, model=args.model, base_url=settings.anthropic_base_url,
                                    max_tokens=settings.threadfork_max_tokens,
                                    timeout=settings.threadfork_model_timeout)
                    label = f"[{scenario.name} · run {repeat} · {arm}]"
                    runs.append(run_arm(scenario, arm, repeat, claude,
                                        lambda step: print(f"{label} {step}", file=sys.stderr, flush=True)))
    except (EvalFailed, ThreadforkError) as failure:
        error = f"{type(failure).__name__}: {failure}"
    except KeyboardInterrupt:
        error = "interrupted"
    except Exception as failure:  # a bug: say where, but keep the runs already paid for
        logging.getLogger("bot.eval").exception("the eval failed")
        error = f"{type(failure).__name__}: {failure}"

    result = summarise(runs, model=args.model, endpoint=endpoint.url, offline=endpoint.offline,
                       scenarios=[s.name for s in scenarios], repeat=args.repeat, error=error)
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(json.dumps(result, indent=2, ensure_ascii=False) + "\n", encoding="utf-8")
    print(render(result))
    print(f"\nResult written to {out}")
    if error:
        print(f"bot.eval: stopped early — {error}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
