"""The fake Slack opens modals as Slack does: only with a fresh trigger id it issued, only modals Slack
would render, keeping them as Slack's view objects whose state shows the initial values; and it
applies the app's answer to a submission as Slack would."""
import json

import pytest

from tests.fakes.slack_api import TEAM_ID
from tests.fakes.view_state import NotSubmittable

from .fake_slack_helpers import ScriptedApp, client, refusal, strict_fake


@pytest.fixture
def slack():
    yield from strict_fake()


TITLE = {"type": "plain_text", "text": "New fork"}
SUBMIT = {"type": "plain_text", "text": "Open"}


def option(text, value):
    return {"text": {"type": "plain_text", "text": text}, "value": value}


def field(block_id, element, *, optional=False, label="Label"):
    return {"type": "input", "block_id": block_id, "optional": optional,
            "label": {"type": "plain_text", "text": label}, "element": element}


def modal(*blocks, **extra):
    """A modal; one section when no blocks are given (Slack wants 1-100)."""
    blocks = list(blocks) or [{"type": "section", "text": {"type": "mrkdwn", "text": "A fork of this channel"}}]
    return {"type": "modal", "title": TITLE, "submit": SUBMIT, "callback_id": "fork_modal", "blocks": blocks, **extra}


FORM = modal(
    field("topic", {"type": "plain_text_input", "action_id": "text", "multiline": True, "initial_value": "budget",
                    "max_length": 100}),
    field("mode", {"type": "static_select", "action_id": "pick", "options": [option("Fresh", "fresh"),
                                                                             option("Inherit", "inherit")],
                   "initial_option": option("Inherit", "inherit")}),
    field("turns", {"type": "number_input", "action_id": "n", "is_decimal_allowed": False, "min_value": "1",
                    "max_value": "50"}, optional=True),
    field("who", {"type": "checkboxes", "action_id": "c", "options": [option("Me", "me"), option("All", "all")]},
          optional=True),
    {"type": "section", "text": {"type": "mrkdwn", "text": "no id of its own"}},
    private_metadata="C0GENERAL01", notify_on_close=True)


def opened_by_slash(slack, view=FORM, team=None):
    app = ScriptedApp(slack)
    app.slash("/fork", team=team)
    trigger = app.received[-1]["trigger_id"]
    token = slack.team(team).bot_token
    return client(slack, token).views_open(trigger_id=trigger, view=view)["view"], trigger


def test_a_trigger_from_an_interaction_opens_one_modal_once_within_three_seconds(slack):
    view, trigger = opened_by_slash(slack)
    assert slack.opened_views("fork_modal")[0].user == "UALICE01"
    assert refusal(lambda: client(slack).views_open(trigger_id=trigger, view=FORM)) == "exchanged_trigger_id"
    assert refusal(lambda: client(slack).views_open(trigger_id="12345.98765.abcd2358fdea", view=FORM)) == \
        "invalid_trigger_id"
    other = slack.add_team()
    theirs = slack.issue_trigger("UBOB0001", other)
    assert refusal(lambda: client(slack).views_open(trigger_id=theirs, view=FORM)) == "invalid_trigger_id"
    late = slack.issue_trigger("UALICE01")
    slack.expire_triggers()
    assert refusal(lambda: client(slack).views_open(trigger_id=late, view=FORM)) == "expired_trigger_id"
    assert slack.violations == [] and len(slack.refusals) == 4


def test_every_interaction_carries_a_trigger_of_its_own(slack):
    app = ScriptedApp(slack)
    app.slash("/fork")
    app.click("merge", "1")
    app.shortcut("fork_from_here", "1800000001.000001")
    app.global_shortcut("new_fork")
    triggers = [payload["trigger_id"] for payload in app.received]
    assert len(set(triggers)) == 4 and all(t in slack.views.triggers for t in triggers)


def test_the_opened_view_is_slacks_view_object_with_ids_filled_in_and_the_initial_values_as_state(slack):
    view, _ = opened_by_slash(slack)
    assert view["id"].startswith("V") and view["root_view_id"] == view["id"] and view["previous_view_id"] is None
    assert (view["team_id"], view["app_installed_team_id"], view["callback_id"], view["private_metadata"]) == (
        TEAM_ID, TEAM_ID, "fork_modal", "C0GENERAL01")
    assert view["hash"] and view["bot_id"] == slack.team().bot_id and view["notify_on_close"] is True
    assert view["blocks"][4]["block_id"]  # Slack names the blocks the app left unnamed
    assert view["state"]["values"] == {
        "topic": {"text": {"type": "plain_text_input", "value": "budget"}},
        "mode": {"pick": {"type": "static_select", "selected_option": option("Inherit", "inherit")}},
        "turns": {"n": {"type": "number_input", "value": None}},
        "who": {"c": {"type": "checkboxes", "selected_options": []}},
    }
    assert slack.view(view["id"]).values == view["state"]["values"]


@pytest.mark.parametrize("bad", [
    modal(title={"type": "plain_text", "text": "t" * 25}),
    modal(title={"type": "mrkdwn", "text": "Title"}),
    {"type": "modal", "blocks": [{"type": "divider"}]},
    modal(field("a", {"type": "plain_text_input", "action_id": "x"}), submit=None),
    modal(close={"type": "plain_text", "text": "c" * 25}),
    modal(callback_id="c" * 256),
    modal(private_metadata="m" * 3001),
    modal(*[{"type": "divider"}] * 101),
    modal({"type": "divider", "block_id": "same"}, {"type": "divider", "block_id": "same"}),
    modal(field("a", {"type": "static_select", "action_id": "x", "options": [option("A", "a")],
                      "initial_option": option("B", "b")})),
    modal(field("a", {"type": "radio_buttons", "action_id": "x", "options": [option(str(n), str(n)) for n in range(11)]})),
    modal(field("a", {"type": "checkboxes", "action_id": "x", "options": [option("A", "a")],
                      "initial_options": [option("Z", "z")]})),
    modal(field("a", {"type": "static_select", "action_id": "x", "options": [option("o" * 76, "a")]})),
    modal(field("a", {"type": "plain_text_input", "action_id": "x", "max_length": 3001})),
    modal(field("a", {"type": "number_input", "action_id": "x"})),
    modal(field("a", {"type": "number_input", "action_id": "x", "is_decimal_allowed": False, "initial_value": "1.5"})),
    modal(field("a", {"type": "number_input", "action_id": "x", "is_decimal_allowed": True, "initial_value": "9",
                      "max_value": "5"})),
    modal(field("a", {"type": "plain_text_input", "action_id": "x"}, label="l" * 2001)),
    modal(field("a", {"type": "button", "action_id": "x", "text": {"type": "plain_text", "text": "b"}})),
])
def test_a_modal_slack_would_not_render_is_refused_and_recorded(slack, bad):
    trigger = slack.issue_trigger("UALICE01")
    assert refusal(lambda: client(slack).views_open(trigger_id=trigger, view=bad)) == "invalid_arguments"
    assert len(slack.violations) == 1 and slack.opened_views() == []
    slack.violations.clear()


def test_the_limits_themselves_are_allowed(slack):
    edge = modal(*[{"type": "divider"}] * 99, field("a", {"type": "plain_text_input", "action_id": "x",
                                                           "max_length": 3000}, label="l" * 2000),
                 title={"type": "plain_text", "text": "t" * 24}, close={"type": "plain_text", "text": "c" * 24},
                 callback_id="c" * 255, private_metadata="m" * 3000)
    trigger = slack.issue_trigger("UALICE01")
    assert client(slack).views_open(trigger_id=trigger, view=edge)["ok"]


STEP = modal(field("a", {"type": "plain_text_input", "action_id": "x"}, optional=True),
             {"type": "actions", "elements": [{"type": "button", "action_id": "more",
                                               "text": {"type": "plain_text", "text": "More"}}]})


def test_views_update_needs_the_current_hash_and_finds_the_view_by_id_or_external_id(slack):
    view, _ = opened_by_slash(slack, {**STEP, "external_id": "fork-1"})
    api = client(slack)
    changed = api.views_update(view_id=view["id"], hash=view["hash"], view=modal(title={"type": "plain_text", "text": "Changed"}))
    assert changed["view"]["title"]["text"] == "Changed" and changed["view"]["hash"] != view["hash"]
    assert refusal(lambda: api.views_update(view_id=view["id"], hash=view["hash"], view=FORM)) == "hash_conflict"
    assert api.views_update(external_id="fork-1", view=FORM)["view"]["id"] == view["id"]
    assert refusal(lambda: api.views_update(view_id="V0NOSUCH", view=FORM)) == "not_found"
    other, _ = opened_by_slash(slack, modal())
    assert refusal(lambda: api.views_update(view_id=other["id"], view={**FORM, "external_id": "fork-1"})) == \
        "duplicate_external_id"


def test_views_push_needs_a_trigger_from_inside_the_modal_and_stacks_three_views_at_most(slack):
    view, _ = opened_by_slash(slack, STEP)
    api, app = client(slack), ScriptedApp(slack)
    assert refusal(lambda: api.views_push(trigger_id=slack.issue_trigger("UALICE01"), view=STEP)) == "not_found"
    for _ in range(2):
        app.click("more", view=slack.opened_views(open_only=True)[-1])
        pushed = api.views_push(trigger_id=app.received[-1]["trigger_id"], view=STEP)["view"]
        assert pushed["root_view_id"] == view["id"] and pushed["previous_view_id"] != pushed["id"]
    app.click("more", view=slack.opened_views(open_only=True)[-1])
    assert refusal(lambda: api.views_push(trigger_id=app.received[-1]["trigger_id"], view=STEP)) == "push_limit_reached"
    assert [v.view["previous_view_id"] for v in slack.opened_views()] == [None, view["id"], slack.opened_views()[1].id]


def test_a_submission_is_what_slack_sends_and_the_apps_errors_keep_the_modal_open(slack):
    view, _ = opened_by_slash(slack)
    app = ScriptedApp(slack, answer=(200, json.dumps({"response_action": "errors", "errors": {"topic": "Too vague"}})))
    reply = app.submit_view(view["id"], {"topic": "the Q3 budget", "pick": "fresh", "turns": 7, "who": ["me", "all"]})
    sent = app.received[-1]
    assert reply.status == 200 and sent["type"] == "view_submission" and sent["trigger_id"]
    assert (sent["team"]["id"], sent["user"]["id"], sent["user"]["team_id"], sent["api_app_id"]) == (
        TEAM_ID, "UALICE01", TEAM_ID, slack.view(view["id"]).view["app_id"])
    submitted = sent["view"]
    assert (submitted["id"], submitted["callback_id"], submitted["private_metadata"], submitted["hash"]) == (
        view["id"], "fork_modal", "C0GENERAL01", view["hash"])
    assert submitted["state"]["values"] == {
        "topic": {"text": {"type": "plain_text_input", "value": "the Q3 budget"}},
        "mode": {"pick": {"type": "static_select", "selected_option": option("Fresh", "fresh")}},
        "turns": {"n": {"type": "number_input", "value": "7"}},
        "who": {"c": {"type": "checkboxes", "selected_options": [option("Me", "me"), option("All", "all")]}},
    }
    shown = slack.view(view["id"])
    assert not shown.closed and shown.errors == {"topic": "Too vague"} and slack.views.problems == []
    app.answer = (200, "")
    app.submit_view(view["id"], {"topic": "the Q3 budget in detail"})
    assert shown.closed and shown.values["topic"]["text"]["value"] == "the Q3 budget in detail"


@pytest.mark.parametrize("values", [
    {"topic": ""},  # required
    {"topic": "x" * 101},  # over max_length
    {"pick": "sideways"},  # not an option
    {"turns": 51},  # over max_value
    {"turns": "2.5"},  # not whole
    {"nothing": "here"},  # no such input
])
def test_a_submission_slacks_client_would_not_send_cannot_be_made(slack, values):
    view, _ = opened_by_slash(slack)
    app = ScriptedApp(slack)
    with pytest.raises(NotSubmittable):
        app.submit_view(view["id"], values)
    assert app.received[1:] == []


@pytest.mark.parametrize("answer, problem", [
    ({"response_action": "errors", "errors": {"nowhere": "x"}}, "errors must name input blocks"),
    ({"response_action": "update", "view": modal(title={"type": "plain_text", "text": "t" * 30})}, "title"),
    ({"response_action": "sideways"}, "unknown response_action"),
])
def test_an_answer_to_a_submission_slack_cannot_use_is_a_problem(slack, answer, problem):
    view, _ = opened_by_slash(slack)
    ScriptedApp(slack, answer=(200, json.dumps(answer))).submit_view(view["id"])
    assert len(slack.views.problems) == 1 and problem in slack.views.problems[0]
    assert not slack.view(view["id"]).closed


def test_update_push_and_clear_answers_change_the_stack_as_slack_does(slack):
    view, _ = opened_by_slash(slack)
    app = ScriptedApp(slack, answer=(200, json.dumps({"response_action": "update", "view": modal(
        title={"type": "plain_text", "text": "Updated"})})))
    app.submit_view(view["id"])
    assert slack.view(view["id"]).view["title"]["text"] == "Updated" and not slack.view(view["id"]).closed
    app.answer = (200, json.dumps({"response_action": "push", "view": FORM}))
    app.submit_view(view["id"])
    top = slack.opened_views(open_only=True)[-1]
    assert top.id != view["id"] and top.view["previous_view_id"] == view["id"]
    app.answer = (200, json.dumps({"response_action": "clear"}))
    app.submit_view(top.id)
    assert slack.opened_views(open_only=True) == []


def test_closing_tells_the_app_only_when_the_view_asked_and_a_click_in_a_modal_names_the_view(slack):
    view, _ = opened_by_slash(slack)
    app = ScriptedApp(slack)
    app.click("pick", "fresh", view=view["id"])
    clicked = app.received[-1]
    assert clicked["container"] == {"type": "view", "view_id": view["id"]} and clicked["view"]["id"] == view["id"]
    assert clicked["actions"][0]["selected_option"] == option("Fresh", "fresh") and "channel" not in clicked
    closed = app.close_view(view["id"])
    assert closed.status == 200 and app.received[-1]["type"] == "view_closed" and slack.view(view["id"]).closed
    quiet, _ = opened_by_slash(slack, modal(field("a", {"type": "plain_text_input", "action_id": "x"})))
    assert app.close_view(quiet["id"]) is None and slack.view(quiet["id"]).closed


def test_an_empty_answer_on_a_pushed_view_goes_back_to_the_view_below(slack):
    view, _ = opened_by_slash(slack, STEP)
    app = ScriptedApp(slack, answer=(200, json.dumps({"response_action": "push", "view": STEP})))
    app.submit_view(view["id"])
    top = slack.opened_views(open_only=True)[-1]
    app.answer = (200, "")
    app.submit_view(top.id)
    assert top.closed and [v.id for v in slack.opened_views(open_only=True)] == [view["id"]]
    with pytest.raises(NotSubmittable):
        app.submit_view(top.id)  # a closed view cannot be submitted


def test_views_go_where_their_kind_belongs_and_the_home_tab_is_kept_per_person(slack):
    home = {"type": "home", "blocks": [{"type": "section", "text": {"type": "mrkdwn", "text": "Your forks"}}]}
    api = client(slack)
    published = api.views_publish(user_id="UALICE01", view=home)["view"]
    assert published["type"] == "home" and slack.home("UALICE01").view["id"] == published["id"]
    again = api.views_publish(user_id="UALICE01", view=home, hash=published["hash"])["view"]
    assert again["id"] == published["id"] and again["hash"] != published["hash"]
    assert refusal(lambda: api.views_publish(user_id="UALICE01", view=home, hash=published["hash"])) == "hash_conflict"
    assert slack.home("UBOB0001") is None
    trigger = slack.issue_trigger("UALICE01")
    assert refusal(lambda: api.views_open(trigger_id=trigger, view=home)) == "invalid_arguments"
    assert refusal(lambda: api.views_publish(user_id="UALICE01", view=FORM)) == "invalid_arguments"
    assert refusal(lambda: api.api_call("views.update", json={"view": FORM})) == "invalid_arguments"
    assert len(slack.violations) == 3
    slack.violations.clear()
