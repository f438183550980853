"""./scripts/run and ./scripts/test install only when pyproject.toml changed since their last install; the
README's commands still set up a fresh clone and run. Run here against a stand-in for .venv's python that
records how it is called (no package index is asked)."""
import os
import shutil
import stat
import subprocess
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]

STAND_IN = """#!/bin/sh
echo "$*" >> "$(dirname "$0")/../calls"
"""


@pytest.fixture
def clone(tmp_path):
    (tmp_path / "scripts").mkdir()
    for script in ("run", "test"):
        shutil.copy(ROOT / "scripts" / script, tmp_path / "scripts" / script)
    shutil.copy(ROOT / "pyproject.toml", tmp_path / "pyproject.toml")
    python = tmp_path / ".venv" / "bin" / "python"
    python.parent.mkdir(parents=True)
    python.write_text(STAND_IN)
    python.chmod(python.stat().st_mode | stat.S_IEXEC)
    return tmp_path


def run(clone: Path, script: str) -> list[str]:
    """What the script asked of .venv's python, this time."""
    calls = clone / ".venv" / "calls"
    calls.unlink(missing_ok=True)
    subprocess.run([str(clone / "scripts" / script)], check=True, timeout=60,
                   env={k: v for k, v in os.environ.items() if k != "PYTHON"})
    return calls.read_text().splitlines()


@pytest.mark.parametrize("script, runs", [("run", "-m bot"), ("test", "-m pytest")])
def test_a_second_start_with_an_unchanged_pyproject_runs_no_pip(clone, script, runs):
    first = run(clone, script)
    assert [c for c in first if c.startswith("-m pip install")] and first[-1].startswith(runs)
    assert run(clone, script) == [run_line for run_line in first if run_line.startswith(runs)]  # no pip at all
    with (clone / "pyproject.toml").open("a") as pyproject:
        pyproject.write("\n# a dependency changed\n")
    assert any(c.startswith("-m pip install") for c in run(clone, script))  # changed: installed again
    assert not [c for c in run(clone, script) if "pip" in c]
