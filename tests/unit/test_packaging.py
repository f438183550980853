"""The Dockerfile and pyproject say what the issue asks; docker itself is not available in CI."""
import re
import tomllib
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def test_the_image_is_slim_runs_as_a_non_root_user_in_http_mode_with_a_health_check():
    lines = [l.strip() for l in (ROOT / "Dockerfile").read_text().splitlines() if l.strip()]
    base = lines[[l.startswith("FROM") for l in lines].index(True)]
    assert "-slim" in base
    # pinned to a patch version (python:3.11.13-slim…) or a digest, never a moving tag like python:3.11-slim
    assert re.fullmatch(r"FROM python:3\.\d+\.\d+-slim\S*", base) or "@sha256:" in base, base
    user = [l for l in lines if l.startswith("USER ")]
    assert user and user[-1] not in ("USER root", "USER 0")
    assert any(l.startswith("HEALTHCHECK") for l in lines)
    assert "/healthz" in (ROOT / "Dockerfile").read_text()
    assert 'CMD ["python", "-m", "bot"]' in lines
    assert not any(l.startswith(("ENV", "ARG")) and "SLACK_APP_TOKEN" in l for l in lines)  # HTTP mode by default


def test_the_dependencies_are_a_layer_of_their_own_before_the_code():
    lines = [l.strip() for l in (ROOT / "Dockerfile").read_text().splitlines() if l.strip()]
    first_copy = next(n for n, l in enumerate(lines) if l.startswith("COPY"))
    dependencies = next(n for n, l in enumerate(lines) if "pip install" in l and "requirements" in l)
    code = next(n for n, l in enumerate(lines) if l.startswith("COPY bot"))
    assert lines[first_copy] == "COPY pyproject.toml ./"  # nothing that changes with the code comes before
    assert first_copy < dependencies < code
    assert any("pip install" in l and "--no-deps" in l for l in lines[code:])


def test_the_distribution_pins_lower_bounds_for_its_dependencies():
    project = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]
    assert project["name"] == "threadfork" and project["requires-python"] == ">=3.11"
    names = {d.split(">=")[0].split("[")[0].lower(): d for d in project["dependencies"]}
    for needed in ("slack-bolt", "anthropic", "sqlalchemy", "apscheduler"):
        assert ">=" in names[needed], needed
