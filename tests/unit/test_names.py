"""People's names: users.info at most once an hour per person, failures included, and a bounded
number of new lookups per text (against the fake Slack, through a real WebClient)."""
import threading

from slack_sdk import WebClient

from bot.slack.gateway import NAME_TTL, NEW_NAMES_PER_TEXT, Names
from tests.fakes.slack_api import FakeSlack


T = "T0TEAM001"


class Clock:
    def __init__(self):
        self.now = 1_000.0

    def __call__(self):
        return self.now


def test_a_name_is_looked_up_once_an_hour_and_a_failure_is_remembered_too():
    slack = FakeSlack().start()
    try:
        slack.names["U0ALICE1"] = "alice"
        slack.fail("users.info", "user_not_found")
        clock = Clock()
        names = Names(lambda team: WebClient(token="xoxb-test", base_url=slack.api_url), clock=clock)
        assert names(T, "U0NOBODY") is None and names(T, "U0NOBODY") is None
        assert names(T, "U0ALICE1") == "alice" and names(T, "U0ALICE1") == "alice"
        assert len(slack.calls_to("users.info")) == 2
        clock.now += NAME_TTL
        assert names(T, "U0ALICE1") == "alice" and len(slack.calls_to("users.info")) == 3
    finally:
        slack.stop()


def test_one_text_asks_about_a_bounded_number_of_new_people():
    slack = FakeSlack().start()
    try:
        names = Names(lambda team: WebClient(token="xoxb-test", base_url=slack.api_url))
        name_of = names.for_text(T)
        found = [name_of(f"U0PERSON{n}") for n in range(NEW_NAMES_PER_TEXT + 3)]
        assert found.count(None) == 3 and len(slack.calls_to("users.info")) == NEW_NAMES_PER_TEXT
        assert names.for_text(T)("U0PERSON0") == found[0]  # known now: no call
        assert len(slack.calls_to("users.info")) == NEW_NAMES_PER_TEXT
    finally:
        slack.stop()


def test_people_asking_about_one_person_at_once_share_one_lookup():
    slack = FakeSlack().start()
    try:
        slack.names["U0ALICE1"] = "alice"
        names = Names(lambda team: WebClient(token="xoxb-test", base_url=slack.api_url))
        found = []
        threads = [threading.Thread(target=lambda: found.append(names(T, "U0ALICE1"))) for _ in range(8)]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join()
        assert found == ["alice"] * 8 and len(slack.calls_to("users.info")) == 1
    finally:
        slack.stop()


def test_a_name_is_asked_of_each_workspace_with_that_workspaces_client():
    slack = FakeSlack().start()
    try:
        tokens = {"T0TEAM001": "xoxb-one", "T0TEAM002": "xoxb-two"}
        names = Names(lambda team: WebClient(token=tokens[team], base_url=slack.api_url))
        slack.names["U0ALICE1"] = "alice"
        assert names("T0TEAM001", "U0ALICE1") == names("T0TEAM002", "U0ALICE1") == "alice"
        assert names.for_text("T0TEAM002")("U0ALICE1") == "alice"  # known there now: no call
        assert [c.token for c in slack.calls_to("users.info")] == ["xoxb-one", "xoxb-two"]
    finally:
        slack.stop()


def test_a_persons_name_and_admin_role_come_from_one_users_info_call_an_hour():
    slack = FakeSlack().start()
    try:
        slack.person("UADMIN01", is_admin=True)
        slack.names["UADMIN01"] = "ada"
        clock = Clock()
        names = Names(lambda team: WebClient(token="xoxb-test", base_url=slack.api_url), clock=clock)
        assert names.admin(T, "UADMIN01") is True and names(T, "UADMIN01") == "ada"
        assert names.for_text(T)("UADMIN01") == "ada" and names.admin(T, "UADMIN01") is True
        assert names.admin(T, "U0ALICE1") is False and names(T, "U0ALICE1")
        assert [c["user"] for c in slack.calls_to("users.info")] == ["UADMIN01", "U0ALICE1"]
        slack.person("UADMIN01", is_admin=False)  # demoted in Slack: seen once the hour is up
        clock.now += NAME_TTL
        assert names.admin(T, "UADMIN01") is False and len(slack.calls_to("users.info")) == 3
    finally:
        slack.stop()
