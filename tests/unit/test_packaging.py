"""The Dockerfile and pyproject say what the issue asks; docker itself is not available in CI."""
import tomllib
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def test_the_image_is_slim_runs_as_a_non_root_user_in_http_mode_with_a_health_check():
    lines = [l.strip() for l in (ROOT / "Dockerfile").read_text().splitlines() if l.strip()]
    assert lines[[l.startswith("FROM") for l in lines].index(True)].endswith("-slim")
    user = [l for l in lines if l.startswith("USER ")]
    assert user and user[-1] not in ("USER root", "USER 0")
    assert any(l.startswith("HEALTHCHECK") for l in lines)
    assert "/healthz" in (ROOT / "Dockerfile").read_text()
    assert 'CMD ["python", "-m", "bot"]' in lines
    assert not any("SLACK_APP_TOKEN" in l for l in lines)  # no app token: HTTP mode


def test_the_distribution_pins_lower_bounds_for_its_dependencies():
    project = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]
    assert project["name"] == "threadfork" and project["requires-python"] == ">=3.11"
    names = {d.split(">=")[0].split("[")[0].lower(): d for d in project["dependencies"]}
    for needed in ("slack-bolt", "anthropic", "sqlalchemy", "apscheduler"):
        assert ">=" in names[needed], needed
