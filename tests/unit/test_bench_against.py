"""`python -m bench --against REV` (bench/against.py): this checkout and a revision in a worktree of its own, each
its own bot on shared fakes, measured turn for turn; the worktree is gone afterwards."""
import subprocess
from pathlib import Path

import pytest

from bench import against

ROOT = Path(__file__).resolve().parents[2]


@pytest.mark.timeout(180)
def test_this_checkout_and_a_revision_are_measured_side_by_side_and_the_worktree_removed():
    if subprocess.run(["git", "-C", str(ROOT), "rev-parse", "HEAD"], capture_output=True).returncode:
        pytest.skip("not a git checkout")
    before = subprocess.run(["git", "-C", str(ROOT), "worktree", "list"], capture_output=True, text=True).stdout
    results = against.run(ROOT, ["HEAD"], rounds=2)
    for name in ("this", "HEAD"):
        for size in against.SIZES:
            figures = results[(name, size)]
            assert len(figures["latency"]) == 2 and all(ms > 0 for ms in figures["latency"])
            assert all(ms > 0 for ms in figures["cpu"])
    rows = against.table(results, ["this", "HEAD"]).splitlines()
    assert len(rows) == 2 + 2 * len(against.SIZES) and "| 1,000 turns | HEAD |" in rows[-1]
    assert "| 1.00 |" in rows[-1]  # the revision named first is the reference
    after = subprocess.run(["git", "-C", str(ROOT), "worktree", "list"], capture_output=True, text=True).stdout
    assert after == before


def test_an_older_checkout_gets_slacks_description_made_from_the_committed_facts(tmp_path):
    import json

    against.slack_description(ROOT, tmp_path)
    spec = json.loads((tmp_path / "shared" / "slack" / "web-api.openapi.json").read_text())
    facts = json.loads((ROOT / against.METHODS).read_text())
    # read as such a checkout's fake Slack reads it: each path's parameters marked required
    required = {path.lstrip("/"): {p["name"] for op in ops.values() for p in op["parameters"] if p["required"]}
                for path, ops in spec["paths"].items()}
    assert required["chat.postMessage"] == set(facts["methods"]["chat.postMessage"]) == {"channel"}
    assert required["chat.startStream"] == set(facts["newer_methods"]["chat.startStream"])
    assert len(required) == len(facts["methods"].keys() | facts["newer_methods"].keys())
