import pytest

from bot.config import ConfigError, load_settings
from bot.domain.durations import parse_duration


@pytest.mark.parametrize("text, seconds", [("90", 90), ("90s", 90), ("15m", 900), ("24h", 86400),
                                           ("7d", 604800), ("1s", 1), (" 2M ", 120), (45, 45)])
def test_durations_accept_seconds_or_a_unit(text, seconds):
    assert parse_duration(text) == seconds


@pytest.mark.parametrize("text", ["", "soon", "5w", "-3s", "0", "1.5.2h"])
def test_bad_durations_are_refused_with_the_accepted_forms(text):
    with pytest.raises(ValueError):
        parse_duration(text)


def test_a_bad_duration_setting_names_the_variable():
    with pytest.raises(ConfigError) as error:
        load_settings(_env_file=None, slack_bot_token="x", slack_signing_secret="y", anthropic_api_key="z",
                      threadfork_sweep_interval="often")
    assert "THREADFORK_SWEEP_INTERVAL" in str(error.value) and "15m" in str(error.value)


def test_compaction_defaults_to_80_percent_of_the_context_window():
    settings = load_settings(_env_file=None, slack_bot_token="x", slack_signing_secret="y", anthropic_api_key="z",
                             threadfork_context_window=100_000)
    assert settings.compact_at == 80_000 and settings.threadfork_sweep_interval == 60


def test_retention_keeps_everything_unless_set_and_is_a_duration_like_the_others(monkeypatch):
    secrets = {"slack_bot_token": "x", "slack_signing_secret": "y", "anthropic_api_key": "z"}
    assert load_settings(_env_file=None, **secrets).threadfork_retention is None
    monkeypatch.setenv("THREADFORK_RETENTION", "90d")
    assert load_settings(_env_file=None, **secrets).threadfork_retention == 90 * 86400
    monkeypatch.setenv("THREADFORK_RETENTION", "a while")
    with pytest.raises(ConfigError, match="THREADFORK_RETENTION"):
        load_settings(_env_file=None, **secrets)


@pytest.mark.parametrize("text, seconds", [("0", 0), ("0d", 0), ("30d", 30 * 86400)])
def test_the_retention_after_uninstall_may_be_zero_meaning_at_once(text, seconds):
    settings = load_settings(_env_file=None, slack_bot_token="x", slack_signing_secret="y", anthropic_api_key="z",
                             threadfork_retention_after_uninstall=text)
    assert settings.threadfork_retention_after_uninstall == seconds


def test_installing_into_many_workspaces_needs_the_client_id_and_secret_and_http_mode():
    secrets = dict(_env_file=None, slack_signing_secret="y", anthropic_api_key="z")
    for missing in ({}, {"slack_client_id": "1.2"}, {"slack_client_secret": "s"}):
        with pytest.raises(ConfigError) as error:
            load_settings(**secrets, **missing)
        assert all(name in str(error.value) for name in ("SLACK_BOT_TOKEN", "SLACK_CLIENT_ID", "SLACK_CLIENT_SECRET"))
    with pytest.raises(ConfigError) as error:
        load_settings(**secrets, slack_client_id="1.2", slack_client_secret="s", slack_app_token="xapp-1")
    assert "SLACK_APP_TOKEN" in str(error.value)
    settings = load_settings(**secrets, slack_client_id="1.2", slack_client_secret="client-secret-not-real")
    assert settings.many_workspaces and "client-secret-not-real" not in repr(settings)  # hidden
