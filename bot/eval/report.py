"""The result: one entry per arm (accuracy, the final parent's input tokens, cost) plus every run's
answers and grades, as JSON and as the table `python -m bot.eval` prints."""
from __future__ import annotations

from dataclasses import asdict
from statistics import mean

from ..domain.model import Usage
from .pricing import PRICES_AS_OF, PRICES_SOURCE, cost, price_of
from .runner import ARMS, EVERY_ARM, ArmRun

MEANINGLESS = ("OFFLINE: a fake Anthropic API answered (it said so), so the accuracy means nothing — "
               "this run only exercised the eval's plumbing end to end.")


def summarise(runs: list[ArmRun], *, model: str, endpoint: str, offline: bool, scenarios: list[str],
              repeat: int, error: str | None = None) -> dict:
    price = price_of(model)
    result = {
        "offline": offline,
        "model": model,
        "endpoint": endpoint,
        "scenarios": scenarios,
        "repeat": repeat,
        "grading": "each answer must match all of its question's patterns (bot/eval/grading.py)",
        "prices": {"usd_per_million_tokens": asdict(price) if price else None, "as_of": PRICES_AS_OF,
                   "source": PRICES_SOURCE},
        "arms": {arm: _arm(model, [r for r in runs if r.arm == arm]) for arm in EVERY_ARM
                 if arm in ARMS or any(r.arm == arm for r in runs)},  # the memory arm when it was played
        "runs": [_run(model, r) for r in runs],
    }
    if error:
        result["error"] = error
    return result


def _arm(model: str, runs: list[ArmRun]) -> dict:
    answers = [a for r in runs for a in r.answers]
    usages = [u for r in runs for u in r.usages]
    spent = cost(model, usages)
    return {
        "runs": len(runs),
        "accuracy": _ratio(sum(a.passed for a in answers), len(answers)),
        "correct": sum(a.passed for a in answers),
        "questions": len(answers),
        "accuracy_by_kind": {kind: _ratio(sum(a.passed for a in answers if a.kind == kind),
                                          sum(a.kind == kind for a in answers)) for kind in ("fact", "outcome")},
        "accuracy_per_run": [_ratio(r.correct, len(r.answers)) for r in runs],
        "final_parent_input_tokens": round(mean(r.final_parent_input_tokens for r in runs)) if runs else None,
        "first_question_input_tokens": round(mean(r.first_question_input_tokens for r in runs)) if runs else None,
        "requests": len(usages),
        "usage": _usage(usages),
        "cost_usd": None if spent is None else round(spent, 4),
        "compactions": sum(r.compactions for r in runs),
    }


def _run(model: str, run: ArmRun) -> dict:
    spent = cost(model, run.usages)
    return {
        "scenario": run.scenario, "repeat": run.repeat, "arm": run.arm,
        "accuracy": _ratio(run.correct, len(run.answers)),
        "final_parent_input_tokens": run.final_parent_input_tokens,
        "first_question_input_tokens": run.first_question_input_tokens,
        "requests": len(run.usages), "usage": _usage(run.usages),
        "cost_usd": None if spent is None else round(spent, 4),
        "compactions": run.compactions, "seconds": run.seconds,
        "answers": [{"question": a.question, "kind": a.kind, "passed": a.passed, "missing": list(a.missing),
                     "answer": a.text} for a in run.answers],
    }


def _usage(usages: list[Usage]) -> dict:
    total = sum(usages, Usage())
    return {"input_tokens": total.input_tokens, "output_tokens": total.output_tokens,
            "cache_read_tokens": total.cache_read_tokens, "cache_write_tokens": total.cache_write_tokens,
            "cache_write_1h_tokens": total.cache_write_1h_tokens}


def _ratio(part: int, whole: int) -> float | None:
    return round(part / whole, 4) if whole else None


def render(result: dict) -> str:
    """The table printed at the end of a run."""
    lines = [f"Recall eval · model {result['model']} at {result['endpoint']} · "
             f"{', '.join(result['scenarios'])} · {result['repeat']} run(s) per arm", ""]
    header = (f"{'arm':<8}{'correct':>9}{'accuracy':>10}{'facts':>8}{'outcomes':>10}"
              f"{'final parent input':>22}{'cost':>10}")
    lines += [header, "-" * len(header)]
    for arm, entry in result["arms"].items():
        if not entry["runs"]:
            continue
        kinds = entry["accuracy_by_kind"]
        cost_text = "n/a" if entry["cost_usd"] is None else f"${entry['cost_usd']:.3f}"
        lines.append(f"{arm:<8}{entry['correct']:>6}/{entry['questions']:<2}{_percent(entry['accuracy']):>10}"
                     f"{_percent(kinds['fact']):>8}{_percent(kinds['outcome']):>10}"
                     f"{entry['final_parent_input_tokens']:>15,} tokens{cost_text:>10}")
    if result["prices"]["usd_per_million_tokens"] is None:
        lines.append(f"(no price known for {result['model']}: costs are n/a; token counts are in the JSON)")
    else:
        lines.append(f"(cost from the reported token usage at {result['prices']['source']} prices of "
                     f"{result['prices']['as_of']}; all of an arm's calls: turns, merges, compactions)")
    if result["offline"]:
        lines += ["", MEANINGLESS]
    return "\n".join(lines)


def _percent(ratio: float | None) -> str:
    return "—" if ratio is None else f"{ratio:.0%}"
