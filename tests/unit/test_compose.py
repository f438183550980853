"""compose.yaml runs production's shape: PostgreSQL, two replicas in HTTP mode, one port in front; Docker's
own `docker compose config` validates it where Docker exists."""
import os
import shutil
import subprocess
from pathlib import Path

import pytest
import yaml

ROOT = Path(__file__).resolve().parents[2]
SECRETS = {"POSTGRES_PASSWORD": "compose-test-password", "SLACK_BOT_TOKEN": "xoxb-compose-test",
           "SLACK_SIGNING_SECRET": "compose-test-secret", "ANTHROPIC_API_KEY": "sk-ant-compose-test"}


def compose() -> dict:
    return yaml.safe_load((ROOT / "compose.yaml").read_text())


def test_postgresql_and_two_replicas_in_http_mode_behind_one_port():
    services = compose()["services"]
    assert set(services) == {"postgres", "bot", "proxy"}
    bot = services["bot"]
    assert bot["deploy"]["replicas"] == 2 and bot["build"] == "."
    assert "ports" not in bot and bot["expose"] == ["3000"]  # reached through the proxy only
    assert "SLACK_APP_TOKEN" not in bot["environment"]  # HTTP mode
    assert bot["environment"]["DATABASE_URL"].startswith("postgresql+psycopg://threadfork:")
    assert bot["depends_on"]["postgres"]["condition"] == "service_healthy"
    assert services["postgres"]["image"].startswith("postgres:") and "healthcheck" in services["postgres"]
    [published] = [p for s in services.values() for p in s.get("ports", [])]
    assert published.endswith(":3000")
    nginx = (ROOT / "deploy" / "nginx.conf").read_text()
    assert "server bot:3000 resolve;" in nginx and "location = /metrics" in nginx


def test_every_image_is_pinned_and_no_secret_is_written_in_the_file():
    text = (ROOT / "compose.yaml").read_text()
    for service in compose()["services"].values():
        if "image" in service and "build" not in service:
            name, _, tag = service["image"].partition(":")
            assert tag and tag[0].isdigit() and tag.count(".") >= 1, service["image"]
    for name in SECRETS:
        assert f"${{{name}:?" in text  # each comes from the environment, required


def test_docker_compose_config_accepts_the_file():
    docker = shutil.which("docker")
    if docker is None:
        pytest.skip("Docker is not installed on this machine: `docker compose config` cannot run here")
    if subprocess.run([docker, "compose", "version"], capture_output=True).returncode != 0:
        pytest.skip("Docker is installed without its compose plugin: `docker compose config` cannot run here")
    done = subprocess.run([docker, "compose", "-f", str(ROOT / "compose.yaml"), "config", "--quiet"],
                          capture_output=True, text=True, env={**os.environ, **SECRETS}, cwd=ROOT)
    assert done.returncode == 0, done.stderr
