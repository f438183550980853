"""Socket Mode end to end: the real `python -m bot` with SLACK_APP_TOKEN set, connected to the fake
Slack's Socket Mode server (fakes/socket_mode.py), which sends exactly the payloads the HTTP tests
post (fakes/socket_actor.py) and checks every ack. Connection ends, redeliveries and SIGTERM too."""
import time

import pytest
from sqlalchemy import make_url

from ..conftest import fresh_postgres
from ..fakes.anthropic_api import Script, is_merge_request
from ..fakes.slack_api import APP_TOKEN
from ..fakes.socket_actor import SocketModeSlack
from ..fakes.socket_mode import Envelope, serving
from ..fakes.tcp_proxy import TcpProxy
from ..harness import CHANNEL, at_once, wait_until
from ..processes import BotProcess

pytestmark = pytest.mark.timeout(120)

RECONNECT_LIMIT = 2.0  # seconds from an abrupt close to a new connection answering (issue 19)


@pytest.fixture
def socket_mode(slack):
    yield from serving(slack)


@pytest.fixture
def started(tmp_path, slack, claude, socket_mode, migrated_sqlite_url):
    """Start `python -m bot` in Socket Mode (with extra settings) and wait for its connection."""
    processes = []

    def start(name: str = "bot", **settings) -> BotProcess:
        before = time.monotonic()
        process = BotProcess(tmp_path, slack, claude, migrated_sqlite_url, name=name, slack_app_token=APP_TOKEN,
                             **{"threadfork_sweep_interval": "1s", **settings})
        processes.append(process)
        socket_mode.wait_connected(after=before, timeout=60)
        return process

    yield start
    for process in processes:
        output = process.stop()
        assert APP_TOKEN not in output


@pytest.fixture
def people(slack, socket_mode):
    return SocketModeSlack(slack, socket_mode)


def answers(slack, top_level=True):
    return [m for m in slack.posts(CHANNEL, top_level=top_level) if m.shown.startswith("Answer")]


def summaries(slack):
    return [p for p in slack.posts(CHANNEL, top_level=True) if "merged fork" in p.get("text", "")]


def log_problems(output: str) -> list[str]:
    return [line for line in output.splitlines() if "Traceback" in line or " ERROR " in line]


def test_the_bot_connects_to_the_url_apps_connections_open_gives_and_acks_every_envelope_by_its_id(
        started, people, slack, socket_mode):
    started()
    [opened] = slack.calls_to("apps.connections.open")[:1]
    assert opened.token == APP_TOKEN  # the app-level token, never the bot's
    people.say("UALICE01", "hello over the socket", mention=True)  # delivered as `message` and `app_mention`
    [answer] = wait_until(lambda: answers(slack), message="the answer")
    assert "thread_ts" not in answer.args
    assert len(socket_mode.acks) == 2 and all(set(ack) == {"envelope_id"} for ack in socket_mode.acks)
    assert not socket_mode.pending


def test_fork_with_a_topic_a_fork_turn_a_check_and_a_button_work_over_socket_mode(started, people, slack, claude):
    started()
    assert people.slash("/fork", "pricing tiers").status == 200
    [root] = wait_until(lambda: [p for p in slack.posts(CHANNEL, top_level=True) if "Fork #1" in str(p["blocks"])],
                        message="the fork root")
    wait_until(lambda: answers(slack, top_level=False), message="the topic answered in the thread")
    people.say("UBOB0001", "constraint: under $20/month", thread_ts=root.ts)
    wait_until(lambda: len(answers(slack, top_level=False)) == 2, message="the fork turn answered")
    assert people.react("UCAROL01", root.ts).status == 200
    [summary] = wait_until(lambda: summaries(slack), message="the merge summary")
    assert "<@UCAROL01> merged fork #1" in summary["blocks"][0]["text"]["text"]
    assert people.slash("/fork", "--fresh packaging").status == 200
    [second] = wait_until(lambda: [p for p in slack.posts(CHANNEL, top_level=True) if "Fork #2" in str(p["blocks"])])
    assert people.click("fork_abandon", message_ts=second.ts, user="UCAROL01").status == 200
    wait_until(lambda: [c for c in slack.calls_to("chat.update")
                        if c["ts"] == second.ts and "Abandoned" in str(c["blocks"])], message="the abandon")
    assert len([r for r in claude.requests if is_merge_request(r)]) == 1


def test_a_refused_settings_submission_comes_back_in_the_ack_as_response_action_errors(
        started, people, slack, socket_mode):
    started()
    slack.person("UADMIN01", is_admin=True)
    people.slash("/threadfork", "", user="UADMIN01")
    [modal] = wait_until(lambda: slack.opened_views("threadfork_settings"), message="the settings modal")
    reply = people.submit_view(modal, {"fork_token_budget": "lots", "expiry": "soon"})
    assert reply.status == 200
    answer = reply.json()
    assert answer["response_action"] == "errors" and set(answer["errors"]) == {"fork_token_budget", "expiry"}
    assert set(socket_mode.acks[-1]) == {"envelope_id", "payload"}  # the answer travels in the ack
    assert not [p for p in slack.posts(CHANNEL) if "changed Threadfork's settings" in p.get("text", "")]


def test_fork_help_is_answered_in_the_envelopes_ack(started, people, slack, socket_mode):
    started()
    reply = people.slash("/fork", "help")
    assert reply.status == 200 and "/fork [--fresh|--inherit] [topic]" in reply.json()["text"]
    assert set(socket_mode.acks[-1]) == {"envelope_id", "payload"}
    assert socket_mode.acks[-1]["payload"]["response_type"] == "ephemeral" and slack.responses == []


def mention(text: str, ts: str) -> dict:
    return {"type": "app_mention", "channel": CHANNEL, "user": "UALICE01", "text": f"<@UBOT0001> {text}", "ts": ts,
            "event_ts": ts, "team": "T0TEAM001"}


def test_a_redelivered_envelope_is_acknowledged_and_answered_once(started, people, slack, claude):
    bot = started()
    event = mention("answer me once", people.new_ts())
    assert people.event(event, event_id="EvONCE0001").status == 200
    wait_until(lambda: answers(slack), message="the answer")
    assert people.event(event, event_id="EvONCE0001", headers={"X-Slack-Retry-Num": "1"}).status == 200
    wait_until(lambda: "event:EvONCE0001 was kept before" in bot.log.read_text(), message="the redelivery turned away")
    assert len(claude.requests) == 1 and len(answers(slack)) == 1


def test_after_the_server_closes_the_socket_without_warning_the_bot_answers_again_within_two_seconds(
        started, people, slack, socket_mode):
    bot = started()
    closed_at = time.monotonic()
    socket_mode.hang_up()  # a close frame with no `disconnect` message first
    socket_mode.wait_connected(after=closed_at, timeout=10)
    assert people.event(mention("still there?", people.new_ts())).status == 200
    acked_after = time.monotonic() - closed_at
    assert acked_after <= RECONNECT_LIMIT, f"answering again {acked_after:.2f} s after the close"
    wait_until(lambda: answers(slack), message="the answer")
    assert not log_problems(bot.log.read_text())


@pytest.mark.parametrize("reason", ["refresh_requested", "link_disabled", "warning"])
def test_a_disconnect_message_moves_the_bot_to_a_new_connection_that_answers(reason, started, people, slack,
                                                                              socket_mode):
    started()
    asked_at = time.monotonic()
    socket_mode.disconnect(reason)
    socket_mode.wait_connected(after=asked_at, timeout=10)
    wait_until(lambda: len(socket_mode.links) == 1, message="the old connection closed")
    assert people.event(mention("after the refresh", people.new_ts())).status == 200
    wait_until(lambda: answers(slack), message="the answer")
    assert len(slack.calls_to("apps.connections.open")) >= 2  # a new URL for the new connection


def test_on_sigterm_a_reply_in_flight_finishes_a_late_envelope_is_left_to_another_process_and_nothing_logs_an_error(
        started, people, slack, claude, socket_mode):
    leaving = started("leaving")
    claude.script(Script(text="almost done " * 8, chunks=8, chunk_delay=0.4))  # ~3 s
    assert people.event(mention("one more", people.new_ts())).status == 200
    wait_until(lambda: slack.posts(CHANNEL), timeout=15, message="the reply to start")
    late = Envelope("events_api", people.wrapped(mention("while you leave", people.new_ts()), "EvLATE0001"))
    acks = []
    at_once(leaving.proc.terminate, lambda: acks.append(socket_mode.send(late, timeout=5)))
    assert leaving.proc.wait(timeout=30) == 0
    output = leaving.log.read_text()
    assert "drained: " in output
    assert not log_problems(output), log_problems(output)
    assert slack.posts(CHANNEL)[0].shown.strip().endswith("almost done")
    started("staying")
    if acks == [None]:  # it came as the process was leaving, which left it to Slack's retry
        assert socket_mode.send(socket_mode.retry_of(late)) is not None
    wait_until(lambda: len(slack.posts(CHANNEL)) == 2, message="the late mention answered")
    assert len(claude.requests) == 2


@pytest.mark.postgres
def test_an_envelope_whose_delivery_cannot_be_kept_is_not_acknowledged_and_its_retry_is_answered_once(
        tmp_path, slack, claude, socket_mode, people):
    url = make_url(fresh_postgres())
    proxy = TcpProxy(url.host, url.port or 5432)
    through_proxy = url.set(host="127.0.0.1", port=proxy.port).render_as_string(hide_password=False)
    bot = BotProcess(tmp_path, slack, claude, through_proxy, slack_app_token=APP_TOKEN)
    try:
        socket_mode.wait_connected(timeout=60)
        proxy.cut()
        envelope = Envelope("events_api", people.wrapped(mention("kept?", people.new_ts()), "EvKEEP0001"))
        assert socket_mode.send(envelope, timeout=5) is None  # the database is gone: not kept, not acknowledged
        assert "could not keep delivery event:EvKEEP0001" in bot.log.read_text()
        proxy.restore()
        assert socket_mode.send(socket_mode.retry_of(envelope)) is not None
        wait_until(lambda: answers(slack), timeout=15, message="the answer")
        assert len(claude.requests) == 1 and len(answers(slack)) == 1
    finally:
        proxy.restore()
        bot.stop()
        proxy.stop()
