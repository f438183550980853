"""Regenerates web_api_tiers.json, each Web API method's rate-limit tier; never needed at test time.

    python -m tests.fakes.slack_spec.tiers METHODS_DIR

METHODS_DIR is the `docs.slack.dev/methods` folder of a checkout of slack-ruby/slack-api-ref, whose files are
taken from each method's page https://docs.slack.dev/reference/methods/<method> ("Rate limits" in its Facts):
`rate_limits` is "t1".."t4" for Tier 1..4 and "t5" for the Special tier. A method whose page gives a number
instead of a tier keeps that number (requests a minute); one whose page names none is left out.
The output depends only on the input: the same files give the same bytes.
"""
from __future__ import annotations

import json
import re
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
TIERS = {"t1": "tier1", "t2": "tier2", "t3": "tier3", "t4": "tier4", "t5": "special"}
SOURCE = ("slack-ruby/slack-api-ref docs.slack.dev/methods/<method>.json (scraped from "
          "https://docs.slack.dev/reference/methods/<method>): each method's rate-limit tier")


def tier_of(raw) -> str | int | None:
    if raw in TIERS:
        return TIERS[raw]
    found = re.match(r"\s*(\d+) requests per minute", str(raw or ""))
    return int(found.group(1)) if found else None


def tiers_json(methods_dir: Path, commit: str) -> str:
    tiers = {}
    for path in sorted(methods_dir.glob("*.json")):
        page = json.loads(path.read_text())
        tier = tier_of(page.get("rate_limits")) if isinstance(page, dict) else None
        if tier is not None:
            tiers[path.stem] = tier
    lines = [f"    {json.dumps(name)}: {json.dumps(tier)}" for name, tier in tiers.items()]
    return ("{\n" + f'  "source": {json.dumps(SOURCE)},\n  "commit": {json.dumps(commit)},\n'
            + '  "tiers": {\n' + ",\n".join(lines) + "\n  }\n}\n")


if __name__ == "__main__":
    folder = Path(sys.argv[1])
    commit = sys.argv[2] if len(sys.argv) > 2 else "unknown"
    (HERE / "web_api_tiers.json").write_text(tiers_json(folder, commit))
