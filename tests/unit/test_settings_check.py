"""Settings are checked whole: every missing or invalid setting is named in one run, the rules between the
Slack settings included, and never a secret's value."""
import pytest

from bot.config import ConfigError, load_settings

SECRETS = {"slack_bot_token": "xoxb-secret-value", "slack_signing_secret": "signing-secret-value",
           "anthropic_api_key": "sk-ant-secret-value"}


def problems(**values) -> list[str]:
    with pytest.raises(ConfigError) as error:
        load_settings(_env_file=None, **values)
    assert str(error.value).startswith("Threadfork cannot start: ")
    return error.value.problems


def test_no_tokens_and_a_bad_log_level_are_named_together():
    found = problems(log_level="LOUD")
    text = "\n".join(found)
    assert "ANTHROPIC_API_KEY" in text and "SLACK_BOT_TOKEN" in text and "SLACK_SIGNING_SECRET" in text
    assert any(p.startswith("invalid setting LOG_LEVEL") for p in found)
    assert len(found) == 4


def test_an_invalid_field_and_a_rule_between_fields_are_named_together():
    found = problems(anthropic_api_key="k", slack_signing_secret="s", threadfork_max_tokens="many")
    assert [p.split(":")[0].split(" (")[0] for p in found] == ["invalid setting THREADFORK_MAX_TOKENS",
                                                               "missing required setting SLACK_BOT_TOKEN"]


def test_a_rule_between_fields_alone_is_named_once():
    assert problems(slack_bot_token="x", anthropic_api_key="k") == [
        "SLACK_SIGNING_SECRET is required in HTTP mode (set SLACK_APP_TOKEN for Socket Mode)"]


@pytest.mark.parametrize("url, says", [("bogus", "not a database URL"), ("mysql://u@h/db", "mysql is not supported"),
                                       ("mongodb://h/db", "mongodb is not supported")])
def test_a_database_url_the_store_cannot_use_is_refused_with_what_would_work(url, says):
    [problem] = problems(**SECRETS, database_url=url)
    assert problem.startswith("invalid setting DATABASE_URL: " + says) and "postgresql+psycopg://" in problem


def test_a_password_in_a_refused_database_url_is_not_repeated():
    [problem] = problems(**SECRETS, database_url="mysql://user:hunter2@db/threadfork")
    assert "hunter2" not in problem


@pytest.mark.parametrize("url", ["sqlite:///data/x.db", "sqlite://", "postgresql+psycopg://postgres@127.0.0.1/db",
                                 "postgresql://u:p@h:5432/db"])
def test_sqlite_and_postgresql_urls_are_accepted(url):
    assert load_settings(_env_file=None, **SECRETS, database_url=url).database_url == url


def test_log_level_is_case_blind_and_log_format_is_text_or_json():
    settings = load_settings(_env_file=None, **SECRETS, log_level="debug", log_format="json")
    assert (settings.log_level, settings.log_format) == ("DEBUG", "json")
    [problem] = problems(**SECRETS, log_format="yaml")
    assert problem.startswith("invalid setting LOG_FORMAT")


def test_no_secret_value_appears_among_the_problems():
    found = problems(**SECRETS, threadfork_secret_key="not-a-fernet-key", log_level="LOUD", port="-1")
    text = "\n".join(found)
    assert len(found) == 3 and "THREADFORK_SECRET_KEY" in text and "PORT" in text
    assert not any(value in text for value in (*SECRETS.values(), "not-a-fernet-key"))


def test_the_health_port_is_a_port():
    assert load_settings(_env_file=None, **SECRETS, threadfork_health_port="9101").threadfork_health_port == 9101
    assert problems(**SECRETS, threadfork_health_port="70000")[0].startswith("invalid setting THREADFORK_HEALTH_PORT")
