"""A connector's URL and name are checked without any I/O, and THREADFORK_CONNECTORS is refused at
start-up by the same rules, in a sentence that never repeats a token."""
import json

import pytest

from bot.config import ConfigError, load_settings
from bot.domain.connectors import MAX_CONNECTORS, ConnectorRow, block_id, check_url, read_connectors

REQUIRED = dict(slack_bot_token="xoxb-test-not-real", slack_signing_secret="test-signing", anthropic_api_key="x",
                _env_file=None)


@pytest.mark.parametrize("url", ["https://mcp.tracker.example/mcp", "https://93.184.216.34/mcp",
                                 "https://mcp.example.com:8443/sse"])
def test_a_public_https_url_is_accepted(url):
    assert check_url(url) is None


@pytest.mark.parametrize("url, words", [
    ("http://mcp.example.com/mcp", "https://"), ("ftp://mcp.example.com", "https://"),
    ("https://[::1]/mcp", "private or local"), ("https://192.168.1.5/mcp", "private or local"),
    ("https://169.254.169.254/latest", "private or local"), ("https://wiki.internal/mcp", "private or local"),
    ("https://intranet/mcp", "private or local"), ("https://user:pw@mcp.example.com/", "token field"),
])
def test_a_url_the_api_could_not_or_should_not_call_is_refused_with_why(url, words):
    assert words in (check_url(url) or "")


def test_an_eleventh_connector_is_refused_on_its_own_name():
    rows = [ConnectorRow(i, f"c{i}", f"https://c{i}.example.com/mcp", "", "", None) for i in range(MAX_CONNECTORS + 1)]
    form, errors = read_connectors(rows, block_id)
    assert list(errors) == [f"connector_{MAX_CONNECTORS}_name"] and "at most 10" in errors[f"connector_{MAX_CONNECTORS}_name"]


def test_a_bad_default_connector_stops_start_up_without_repeating_its_token():
    entry = {"name": "tracker", "url": "http://mcp.tracker.example/mcp", "token": "do-not-echo-this"}
    with pytest.raises(ConfigError) as refused:
        load_settings(threadfork_connectors=json.dumps([entry]), **REQUIRED)
    assert "THREADFORK_CONNECTORS" in str(refused.value) and "https://" in str(refused.value)
    assert "do-not-echo-this" not in str(refused.value)
