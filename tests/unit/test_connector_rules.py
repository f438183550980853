"""A connector's URL and name are checked without any I/O, and THREADFORK_CONNECTORS is refused at
start-up by the same rules, in a sentence that never repeats a token."""
import json

import pytest

from bot.config import ConfigError, load_settings
from bot.domain.connectors import MAX_CONNECTORS, Connector, ConnectorRow, block_id, check_url, read_connectors

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


@pytest.mark.parametrize("url", [
    "https://127.0.0.1./mcp", "https://127.1/", "https://0x7f.0.0.1/", "https://0177.0.0.1/", "https://2130706433/",
    "https://[64:ff9b::a9fe:a9fe]/", "https://[::ffff:127.0.0.1]/", "https://[::127.0.0.1]/", "https://[2002:a00:1::]/",
    "https://[64:ff9b:1::a00:1]/", "https://LOCALHOST./", "https://127%2e0%2e0%2e1/",
    "https://127\u30020\u30020\u30021/",
    "https://wiki.internal./mcp",
])
def test_a_private_host_in_any_spelling_a_resolver_reads_is_refused(url):
    assert "private or local" in (check_url(url) or "")


@pytest.mark.parametrize("url", ["https://mcp.example.com/\x00", "https://mcp.exa\x00mple.com/"])
def test_a_url_with_a_control_character_is_refused_naming_it(url):
    assert "control character" in (check_url(url) or "")


def test_a_token_is_kept_only_for_the_same_name_scheme_host_port_and_path():
    shown = Connector("tracker", "https://mcp.example.com/mcp")

    def kept(name, url):
        form, errors = read_connectors([ConnectorRow(0, name, url, "", "", shown)], block_id)
        assert errors == {}
        return form.kept_from == {name: "tracker"}, [n for n, _ in form.moved]

    assert kept("tracker", "https://MCP.example.com.:443/mcp") == (True, [])
    assert kept("tracker", "https://mcp.example.com/mcp?x=1") == (True, [])
    assert kept("tracker", "https://attacker.example/collect") == (False, ["tracker"])
    assert kept("tracker", "https://mcp.example.com:8443/mcp") == (False, ["tracker"])
    assert kept("tracker", "https://mcp.example.com/other") == (False, ["tracker"])
    assert kept("tracker2", "https://mcp.example.com/mcp") == (False, ["tracker2"])


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
