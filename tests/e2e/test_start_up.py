"""`python -m bot check` and every start: all bad settings named at once (exit 2), and every start-up
failure one "Threadfork cannot start: …" line, never a traceback."""
import subprocess
import sys

import pytest

from ..harness import API_KEY, BOT_TOKEN, SIGNING_SECRET
from ..processes import clean_env, free_port


def run(tmp_path, *args, **env) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "bot", *args], cwd=tmp_path, env=clean_env(**env),
                          capture_output=True, text=True, timeout=90)


def test_check_with_no_tokens_and_a_loud_log_level_names_all_three_and_exits_2(tmp_path):
    done = run(tmp_path, "check", LOG_LEVEL="LOUD")
    assert done.returncode == 2
    output = done.stdout + done.stderr
    for name in ("SLACK_BOT_TOKEN", "ANTHROPIC_API_KEY", "LOG_LEVEL"):
        assert name in output
    assert "Traceback" not in output


def test_check_of_complete_settings_says_so_and_starts_nothing(tmp_path):
    done = run(tmp_path, "check", SLACK_BOT_TOKEN=BOT_TOKEN, SLACK_APP_TOKEN="xapp-1-test",
               ANTHROPIC_API_KEY=API_KEY, THREADFORK_HEALTH_PORT="9101")
    assert done.returncode == 0, done.stderr
    assert "complete: Socket Mode, /healthz and /metrics on port 9101" in done.stdout
    assert not (tmp_path / "data").exists()  # no database was opened
    assert BOT_TOKEN not in done.stdout + done.stderr


def test_an_unknown_argument_gets_the_usage(tmp_path):
    done = run(tmp_path, "chekc")
    assert done.returncode == 2 and "usage: python -m bot [check]" in done.stderr


def test_a_start_with_several_bad_settings_names_them_in_one_line(tmp_path):
    done = run(tmp_path, ANTHROPIC_API_KEY=API_KEY, LOG_LEVEL="LOUD", THREADFORK_MAX_TOKENS="lots")
    assert done.returncode == 2
    [line] = done.stderr.splitlines()
    assert line.startswith("Threadfork cannot start: ")
    assert all(name in line for name in ("LOG_LEVEL", "THREADFORK_MAX_TOKENS", "SLACK_BOT_TOKEN",
                                         "SLACK_SIGNING_SECRET"))


@pytest.mark.parametrize("url", ["bogus", "mysql://threadfork@127.0.0.1/threadfork"])
def test_a_database_url_the_bot_cannot_use_stops_it_with_exit_2_and_no_traceback(tmp_path, url):
    done = run(tmp_path, SLACK_BOT_TOKEN=BOT_TOKEN, SLACK_SIGNING_SECRET=SIGNING_SECRET, ANTHROPIC_API_KEY=API_KEY,
               DATABASE_URL=url, PORT=str(free_port()))
    assert done.returncode == 2
    assert "cannot start" in done.stderr and "DATABASE_URL" in done.stderr
    assert "Traceback" not in done.stdout + done.stderr


@pytest.mark.parametrize("where", ["a data folder that cannot be made", "a database server that refuses"])
def test_a_database_that_cannot_be_used_stops_the_start_with_one_line(tmp_path, where):
    (tmp_path / "afile").write_text("")
    url = (f"sqlite:///{tmp_path}/afile/data/threadfork.db" if where.startswith("a data")
           else f"postgresql+psycopg://postgres@127.0.0.1:{free_port()}/threadfork")
    done = run(tmp_path, SLACK_BOT_TOKEN=BOT_TOKEN, SLACK_APP_TOKEN="xapp-1-test", ANTHROPIC_API_KEY=API_KEY,
               DATABASE_URL=url)
    assert done.returncode == 3
    lines = [line for line in done.stderr.splitlines() if "cannot start" in line]
    assert len(lines) == 1 and lines[0].startswith("Threadfork cannot start: the database is not usable: ")
    assert "Traceback" not in done.stderr
