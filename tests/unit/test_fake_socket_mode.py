"""The fake Socket Mode server is as strict as Slack's: a ticket from apps.connections.open, `hello`
first, acks that name an envelope the connection holds, a response payload only where one is accepted."""
import json
import threading
from contextlib import contextmanager

import pytest
from slack_sdk import WebClient
from websockets.exceptions import InvalidStatus
from websockets.sync.client import connect

from ..fakes.slack_api import APP_TOKEN, FakeSlack
from ..fakes.socket_mode import Envelope, FakeSocketMode
from ..harness import wait_until


@pytest.fixture
def server():
    fake = FakeSocketMode().start()
    yield fake
    fake.stop()


@contextmanager
def opened(server):
    """A connection as an app opens it, past its `hello`."""
    with connect(server.ticket_url()) as link:
        assert json.loads(link.recv(timeout=5))["type"] == "hello"
        yield link


def sent_in_background(server, envelope):
    answer = {}
    thread = threading.Thread(target=lambda: answer.setdefault("ack", server.send(envelope, timeout=5)))
    thread.start()
    return thread, answer


def test_apps_connections_open_hands_out_a_ticket_url_that_opens_one_connection_only(server):
    slack = FakeSlack().start()
    slack.socket_mode = server
    try:
        url = WebClient(base_url=slack.api_url).apps_connections_open(app_token=APP_TOKEN)["url"]
    finally:
        slack.stop()
    assert url.startswith(f"ws://127.0.0.1:{server.port}/link/?ticket=")
    with connect(url) as link:
        hello = json.loads(link.recv(timeout=5))
    assert hello["type"] == "hello" and hello["num_connections"] == 1
    with pytest.raises(InvalidStatus, match="403"):
        connect(url)  # used
    with pytest.raises(InvalidStatus, match="403"):
        connect(url.replace("ticket=", "ticket=forged"))


def test_an_ack_with_its_envelope_id_and_a_response_payload_is_returned_to_the_sender(server):
    with opened(server) as link:
        thread, answer = sent_in_background(server, Envelope("interactive", {"type": "view_submission"}))
        envelope = json.loads(link.recv(timeout=5))
        assert envelope["type"] == "interactive" and envelope["accepts_response_payload"] is True
        link.send(json.dumps({"envelope_id": envelope["envelope_id"], "payload": {"response_action": "clear"}}))
        thread.join()
    assert answer["ack"] == {"envelope_id": envelope["envelope_id"], "payload": {"response_action": "clear"}}
    assert not server.violations and not server.pending


def test_acks_slack_would_refuse_are_violations(server):
    with opened(server) as link:
        thread, _ = sent_in_background(server, Envelope("events_api", {"type": "event_callback"}))
        envelope = json.loads(link.recv(timeout=5))
        assert envelope["retry_attempt"] == 0 and envelope["accepts_response_payload"] is False
        link.send(json.dumps({"envelope_id": "not-one-of-yours"}))
        link.send(json.dumps({"envelope_id": envelope["envelope_id"], "payload": {"text": "no"}}))
        link.send(json.dumps({"envelope_id": envelope["envelope_id"]}))  # twice
        thread.join()
        wait_until(lambda: len(server.violations) == 3, message="three refusals")
    server.violations.clear()


def test_an_envelope_left_unacknowledged_stays_pending_and_its_retry_counts_up(server):
    with opened(server) as link:
        envelope = Envelope("events_api", {"type": "event_callback", "event_id": "Ev1"})
        assert server.send(envelope, timeout=0.2) is None
        assert json.loads(link.recv(timeout=5))["envelope_id"] in server.pending
        retry = server.retry_of(envelope)
    assert not server.pending and retry.envelope_id != envelope.envelope_id
    assert retry.message()["retry_attempt"] == 1 and retry.message()["retry_reason"] == "timeout"
    assert retry.payload == envelope.payload
