"""Remote MCP connectors, end to end through the fakes: added in `/threadfork`'s modal (refused inside it
when wrong, nothing saved), sent as the Messages API's MCP connector asks (`mcp_servers`, a matching
`mcp_toolset`, the beta header), a connector's call shown as a task card in a fork, its raw result never
resent, a failing connector named in a short note, and its token in no log line, no Slack call and no
database column as plain text — on SQLite and PostgreSQL."""
import json
import logging
import re
import secrets

import pytest
from cryptography.fernet import Fernet
from sqlalchemy import select

from bot.store.tables import connectors, metadata

from ..fakes.anthropic_api import McpCall, Script, is_merge_request
from ..harness import CHANNEL, GENERAL, RunningBot, wait_until
from .test_channel_settings import admin, ask_parent, element, open_settings

URL = "https://mcp.tracker.example/mcp"
KEYED = {"threadfork_secret_key": Fernet.generate_key().decode()}


@pytest.fixture
def keyed_bot(slack, claude, migrated_url):
    """The app with THREADFORK_SECRET_KEY, on SQLite and on PostgreSQL."""
    running = RunningBot(slack, claude, migrated_url, **KEYED)
    yield running
    running.stop()


def add_tracker(bot, slack, token: str, tools: str = "") -> dict:
    reply = bot.submit_view(open_settings(bot, slack, admin(slack)), {
        "connector_0_name": "tracker", "connector_0_url": URL, "connector_0_token": token, "connector_0_tools": tools})
    assert reply.status == 200 and not reply.body, reply.body
    return reply


def plain_text_in_database(bot, token: str) -> list[str]:
    """Every table.column whose value holds `token` as written."""
    found = []
    with bot.db.engine.connect() as conn:
        for table in metadata.sorted_tables:
            for row in conn.execute(select(table)):
                found += [f"{table.name}.{column}" for column, value in row._mapping.items()
                          if value is not None and token in str(value)]
    return found


def test_the_modal_has_a_connectors_section_and_an_http_url_is_refused_with_nothing_saved(bot, slack):
    modal = open_settings(bot, slack, admin(slack))
    assert any(b.get("block_id", "").startswith("connector") and b["type"] == "input" for b in modal.view["blocks"])
    reply = bot.submit_view(modal, {"connector_0_name": "tracker", "connector_0_url": "http://mcp.tracker.example/mcp",
                                    "instructions": "Be terse."})
    answer = reply.json()
    assert answer["response_action"] == "errors" and list(answer["errors"]) == ["connector_0_url"]
    assert "https://" in answer["errors"]["connector_0_url"]
    assert bot.store.channel_settings.of(GENERAL).connectors is None
    assert bot.store.channel_settings.of(GENERAL).instructions is None  # nothing else saved either


@pytest.mark.parametrize("name, url, field, words", [
    ("tracker", "https://127.0.0.1/mcp", "url", "private or local"),
    ("tracker", "https://10.1.2.3/mcp", "url", "private or local"),
    ("tracker", "https://localhost:8443/mcp", "url", "private or local"),
    ("bad name!", URL, "name", "letters, digits"),
])
def test_a_private_host_or_a_bad_name_is_refused_on_its_field(bot, slack, name, url, field, words):
    reply = bot.submit_view(open_settings(bot, slack, admin(slack)), {"connector_0_name": name, "connector_0_url": url})
    errors = reply.json()["errors"]
    assert list(errors) == [f"connector_0_{field}"] and words in errors[f"connector_0_{field}"]
    assert bot.store.channel_settings.of(GENERAL).connectors is None


def test_a_duplicate_name_is_refused_on_the_second_one(bot, slack):
    add_tracker(bot, slack, "")
    reply = bot.submit_view(open_settings(bot, slack, admin(slack)), {"connector_1_name": "tracker",
                                                                      "connector_1_url": "https://other.example/mcp"})
    assert list(reply.json()["errors"]) == ["connector_1_name"]
    assert [c.name for c in bot.store.channel_settings.of(GENERAL).connectors] == ["tracker"]


def test_a_token_without_the_secret_key_is_refused_saying_what_to_set(bot, slack):
    reply = bot.submit_view(open_settings(bot, slack, admin(slack)), {
        "connector_0_name": "tracker", "connector_0_url": URL, "connector_0_token": secrets.token_hex(16)})
    errors = reply.json()["errors"]
    assert list(errors) == ["connector_0_token"] and "THREADFORK_SECRET_KEY" in errors["connector_0_token"]
    assert bot.store.channel_settings.of(GENERAL).connectors is None


@pytest.mark.settings(**KEYED)
def test_a_channel_with_a_connector_sends_mcp_servers_its_toolset_and_the_beta_header(bot, slack, claude):
    ask_parent(bot, claude, "before any connector")
    assert "mcp_servers" not in claude.requests[0] and claude.tools_sent[0] is None
    assert not any("mcp-client" in name for name in claude.betas[0])
    token = secrets.token_hex(16)
    add_tracker(bot, slack, token, tools="search, get_issue")
    request = ask_parent(bot, claude, "what is open?")
    assert request["mcp_servers"] == [{"type": "url", "url": URL, "name": "tracker", "authorization_token": token}]
    assert request["tools"] == [{"type": "mcp_toolset", "mcp_server_name": "tracker",
                                 "default_config": {"enabled": False},
                                 "configs": {"search": {"enabled": True}, "get_issue": {"enabled": True}}}]
    assert "mcp-client-2026-09-15" in claude.betas[-1]
    modal = open_settings(bot, slack, admin(slack))
    assert element(modal, "connector_0_token")["placeholder"]["text"] == "token set — leave empty to keep it"
    assert token not in json.dumps(modal.view)


def test_the_token_is_in_no_log_line_no_slack_call_and_no_database_column(keyed_bot, slack, claude, caplog):
    bot = keyed_bot
    caplog.set_level(logging.DEBUG)
    token = "tok-" + secrets.token_hex(16)
    add_tracker(bot, slack, token)
    claude.script(Script(text="Bug 12 is open.", mcp=[McpCall("tracker", "search", {"q": "open"}, "Bug 12: open",
                                                              is_error=True)]))
    ask_parent(bot, claude, "what is open?")
    assert claude.requests[-1]["mcp_servers"][0]["authorization_token"] == token  # it was used
    assert not [r for r in caplog.records if token in r.getMessage()]
    assert not [c.method for c in slack.calls if token in json.dumps(c.args, default=str)]
    assert plain_text_in_database(bot, token) == []
    assert bot.store.connector_tokens.sealed(GENERAL)  # kept, sealed


@pytest.mark.settings(**KEYED)
def test_a_removed_connector_takes_its_token_along_and_the_request_names_none(bot, slack, claude):
    add_tracker(bot, slack, secrets.token_hex(16))
    modal = open_settings(bot, slack, admin(slack))
    bot.submit_view(modal, {"connector_0_name": "", "connector_0_url": ""})
    assert bot.services.channel_admin.effective(GENERAL).connectors == ()
    assert bot.store.connector_tokens.sealed(GENERAL) == {}
    with bot.db.engine.connect() as conn:
        assert conn.execute(select(connectors)).all() == []  # the row, and its sealed token, are gone
    request = ask_parent(bot, claude)
    assert "mcp_servers" not in request and "tools" not in request
    assert not any("mcp-client" in name for name in claude.betas[-1])


@pytest.mark.settings(**KEYED)
def test_a_connectors_call_is_a_task_card_in_a_fork_and_its_raw_result_is_never_resent(bot, slack, claude):
    add_tracker(bot, slack, secrets.token_hex(16))
    bot.slash("/fork", "--fresh triage")
    root = bot.fork_root()
    bot.quiesce()
    raw = "RAW-RESULT-" + secrets.token_hex(8)
    claude.script(Script(text="Bug 12 is the only open one.", chunk_delay=0.05,
                         mcp=[McpCall("tracker", "search", {"q": "open bugs"}, f"{raw}\nmore lines")]))
    bot.say("UBOB0001", "what is open?", thread_ts=root)
    wait_until(lambda: len(claude.requests) == 2)
    bot.quiesce()
    cards = [chunk for call in slack.calls if call.method in ("chat.startStream", "chat.appendStream")
             for chunk in call.get("chunks") or [] if chunk.get("type") == "task_update"]
    assert [(c["title"], c["status"]) for c in cards] == [("tracker · search", "in_progress"),
                                                         ("tracker · search", "complete")]
    assert cards[1]["output"] == raw
    bot.say("UBOB0001", "thanks", thread_ts=root)
    wait_until(lambda: len(claude.requests) == 3)
    later = json.dumps(claude.requests[2])
    assert "Bug 12 is the only open one." in later  # the answer's text is kept
    assert raw not in later and "mcp_tool_result" not in later and "mcp_tool_use" not in later
    assert claude.requests[2]["mcp_servers"][0]["name"] == "tracker"  # the fork's snapshot


@pytest.mark.settings(**KEYED)
def test_a_failing_connector_is_named_in_a_short_note_and_the_answer_goes_on(bot, slack, claude):
    add_tracker(bot, slack, "")
    claude.script(Script(text="From what I know, bug 12 is open.",
                         mcp=[McpCall("tracker", "search", {"q": "open"}, "401 Unauthorized", is_error=True)]))
    ask_parent(bot, claude, "what is open?")
    [answer] = [p for p in slack.posts(CHANNEL, top_level=True) if "bug 12" in p.shown]
    assert answer.shown.startswith("From what I know, bug 12 is open.")
    assert "The connector “tracker” failed (401 Unauthorized)" in answer.shown


@pytest.mark.settings(threadfork_connectors=json.dumps([{"name": "wiki", "url": "https://wiki.example/mcp",
                                                          "token": "env-token-for-the-test"}]))
def test_threadfork_connectors_gives_every_channel_its_default_set_with_the_environments_token(bot, slack, claude):
    request = ask_parent(bot, claude)
    assert request["mcp_servers"] == [{"type": "url", "url": "https://wiki.example/mcp", "name": "wiki",
                                       "authorization_token": "env-token-for-the-test"}]
    assert request["tools"] == [{"type": "mcp_toolset", "mcp_server_name": "wiki"}]
    modal = open_settings(bot, slack, admin(slack))
    assert element(modal, "connector_0_url")["initial_value"] == "https://wiki.example/mcp"
    assert "env-token-for-the-test" not in json.dumps(modal.view)


@pytest.mark.settings(**KEYED)
def test_context_and_the_home_tab_count_calls_per_connector_per_fork(bot, slack, claude):
    add_tracker(bot, slack, "")
    claude.script(Script(text="One in the channel.", mcp=[McpCall("tracker", "search")]))
    ask_parent(bot, claude, "anything open?")
    bot.slash("/fork", "--fresh triage", user="UALICE01")
    root = bot.fork_root()
    bot.quiesce()
    claude.script(Script(text="Two in the fork.", mcp=[McpCall("tracker", "search"), McpCall("tracker", "get_issue")]))
    bot.say("UALICE01", "dig in", thread_ts=root)
    wait_until(lambda: len(claude.requests) == 3)  # the channel's question, the fork's topic, then this
    bot.quiesce()
    bot.slash("/context")
    [report] = wait_until(lambda: slack.responses)
    assert "Connector calls: this conversation: tracker 1; #1: tracker 2." in report["text"]
    bot.event({"type": "app_home_opened", "user": "UALICE01", "channel": "D0HOME001", "tab": "home",
               "event_ts": "1.2"})
    [publish] = wait_until(lambda: slack.calls_to("views.publish"))
    assert "connector calls: tracker 2" in json.dumps(publish["view"])


@pytest.mark.settings(**KEYED)
def test_a_merge_keeps_the_connector_calls_conclusions_and_never_their_raw_results(bot, slack, claude):
    add_tracker(bot, slack, "")
    bot.slash("/fork", "--fresh triage")
    root = bot.fork_root()
    bot.quiesce()
    raw = "RAW-RESULT-" + secrets.token_hex(8)
    claude.script(Script(text="Conclusion: bug 12 blocks the release.", mcp=[McpCall("tracker", "search", {}, raw)]))
    bot.say("UBOB0001", "what blocks the release?", thread_ts=root)
    wait_until(lambda: len(claude.requests) == 2)
    bot.quiesce()
    bot.react("UALICE01", root)
    [summary_request] = wait_until(lambda: [r for r in claude.requests if is_merge_request(r)])
    sent = json.dumps(summary_request)
    assert "Conclusion: bug 12 blocks the release." in sent
    assert raw not in sent and "mcp_tool_result" not in sent


@pytest.mark.parametrize("new", [{"connector_0_url": "https://attacker.example/collect"},
                                 {"connector_0_name": "tracker2"}])
def test_a_token_never_follows_a_new_url_or_name_and_the_modal_says_so(keyed_bot, slack, claude, new):
    bot = keyed_bot
    token = "tok-" + secrets.token_hex(16)
    add_tracker(bot, slack, token)
    reply = bot.submit_view(open_settings(bot, slack, admin(slack)), {"connector_0_token": "", **new})
    answer = reply.json()
    assert answer["response_action"] == "update" and "without a token" in json.dumps(answer["view"])
    assert not slack.views.problems
    request = ask_parent(bot, claude, "what is open?")
    [server] = request["mcp_servers"]
    assert server["url"] == (new.get("connector_0_url") or URL) and "authorization_token" not in server
    assert token not in json.dumps(request)
    assert bot.store.connector_tokens.sealed(GENERAL) == {}


@pytest.mark.settings(**KEYED)
def test_the_same_url_spelled_alike_and_other_settings_changed_keep_the_token_silently(bot, slack, claude):
    token = "tok-" + secrets.token_hex(16)
    add_tracker(bot, slack, token)
    reply = bot.submit_view(open_settings(bot, slack, admin(slack)), {
        "connector_0_url": "https://MCP.tracker.example.:443/mcp", "instructions": "Be terse."})
    assert reply.status == 200 and not reply.body
    assert ask_parent(bot, claude)["mcp_servers"][0]["authorization_token"] == token


@pytest.mark.parametrize("url", ["https://127.0.0.1./", "https://127.1/", "https://0x7f.0.0.1/",
                                 "https://[64:ff9b::a9fe:a9fe]/", "https://mcp.example.com/\x00"])
def test_a_private_host_in_another_spelling_or_a_nul_in_the_url_is_refused_on_its_field(bot, slack, url):
    reply = bot.submit_view(open_settings(bot, slack, admin(slack)), {"connector_0_name": "tracker",
                                                                      "connector_0_url": url})
    assert reply.status == 200
    errors = reply.json()["errors"]
    assert list(errors) == ["connector_0_url"] and ("private or local" in errors["connector_0_url"]
                                                    or "control character" in errors["connector_0_url"])
    assert bot.store.channel_settings.of(GENERAL).connectors is None


HOSTILE = "<!channel> <@U2> <https://evil.example/phish|https://docs.example.com/ok> <https://evil.example|ok>"


def _hidden_behind_a_label(text: str) -> list[str]:
    """Links in Slack's markup or Markdown whose target is evil.example under another label."""
    markdown = re.findall(r"\[([^\]]*)\]\(([^)]*)\)", text)
    links = re.findall(r"<([^<>|]*)\|([^<>]*)>", text) + [(target, label) for label, target in markdown]
    return [f"{label} -> {target}" for target, label in links if "evil.example" in target and label != target]


def test_a_tools_name_and_result_are_shown_as_data_in_a_forks_task_cards(keyed_bot, slack, claude):
    bot = keyed_bot
    add_tracker(bot, slack, "")
    bot.slash("/fork", "--fresh triage")
    root = bot.fork_root()
    bot.quiesce()
    claude.script(Script(text="Checked.", mcp=[McpCall("tracker", "x<!here>tool", {}, HOSTILE),
                                                McpCall("tracker", "search", {}, HOSTILE, is_error=True)]))
    bot.say("UBOB0001", "what is open?", thread_ts=root)
    wait_until(lambda: len(claude.requests) == 2)
    bot.quiesce()
    sent = json.dumps([c.args for c in slack.calls], default=str, ensure_ascii=False)
    assert "<!channel>" not in sent and "<!here>" not in sent and "<@U2>" not in sent
    assert _hidden_behind_a_label(sent) == []
    cards = [chunk for call in slack.calls if call.method in ("chat.startStream", "chat.appendStream",
                                                               "chat.stopStream")
             for chunk in call.get("chunks") or [] if chunk.get("type") == "task_update"]
    assert any("x" in c["title"] and "here" in c["title"] for c in cards)
    assert all(len(c.get("output", "")) <= 256 for c in cards)
    assert any("https://evil.example/phish" in c.get("output", "") for c in cards)  # shown, as itself


def test_a_tools_error_echoing_the_token_reaches_no_slack_call_no_table_and_no_log_line(keyed_bot, slack, claude,
                                                                                        caplog):
    bot = keyed_bot
    caplog.set_level(logging.DEBUG)
    token = "tok-" + secrets.token_hex(16)
    add_tracker(bot, slack, token)
    claude.script(Script(text=f"The server said bearer {token} was rejected, and {HOSTILE}.", chunk_delay=0.01,
                         mcp=[McpCall("tracker", "search", {"q": "open"}, f"401 Unauthorized: bearer {token} rejected",
                                      is_error=True)]))
    ask_parent(bot, claude, "what is open?")
    bot.slash("/fork", "--fresh triage")
    root = bot.fork_root()
    bot.quiesce()
    claude.script(Script(text=f"Again {token}.", chunk_delay=0.01, mcp=[McpCall(
        "tracker", "search", {}, f"{'x' * 110} bearer {token} rejected", is_error=True)]))
    bot.say("UBOB0001", "and here?", thread_ts=root)
    wait_until(lambda: len(claude.requests) == 3)
    bot.quiesce()
    assert claude.requests[-1]["mcp_servers"][0]["authorization_token"] == token  # it was sent
    assert not [r.getMessage()[:80] for r in caplog.records if token in r.getMessage()]
    assert not [c.method for c in slack.calls if token in json.dumps(c.args, default=str)]
    assert not [c.method for c in slack.calls if token[:12] in json.dumps(c.args, default=str)]  # nor cut in half
    assert plain_text_in_database(bot, token) == []
    [answer] = [p for p in slack.posts(CHANNEL, top_level=True) if "server said" in p.shown]
    assert "The connector “tracker” failed (401 Unauthorized: bearer [hidden] rejected)" in answer.shown
    assert "<!channel>" not in json.dumps([c.args for c in slack.calls], default=str)
