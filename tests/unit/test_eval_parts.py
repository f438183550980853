"""The recall eval's parts: shipped scenarios are sound, grading is strict but reads Markdown and
number formats alike, costs follow the price table, and its recording Slack ports are the whole ports."""
import copy
import json
from importlib import resources

import pytest

from bot.domain.errors import ChatUnavailable
from bot.domain.model import Usage
from bot.eval.recording import RecordingChat
from bot.eval.grading import grade
from bot.domain.spend import cost, price_of
from bot.eval.scenario import ScenarioError, available, load, parse
from bot.domain.model import Channel
from bot.services.ports import CHAT_PORTS, Audience, Place

SHIPPED = available()


def raw(name: str) -> dict:
    return json.loads((resources.files("bot.eval") / "scenarios" / f"{name}.json").read_text(encoding="utf-8"))


def test_scenarios_ship_in_the_package_and_one_plans_a_launch():
    assert "launch-planning" in SHIPPED
    scenario = load("launch-planning")
    assert {"fact", "outcome"} <= {q.kind for q in scenario.questions}
    assert len(scenario.explorations) >= 3 and all(len(e.turns) >= 3 for e in scenario.explorations)


@pytest.mark.parametrize("name", SHIPPED)
def test_every_question_passes_its_reference_and_fails_a_non_answer(name):
    for question in load(name).questions:
        assert grade(question, question.reference).passed, question.id
        assert not grade(question, "I don't know: nothing in this channel records that.").passed, question.id
        assert not grade(question, "").passed, question.id


def test_grading_reads_markdown_spaces_and_dashes_alike():
    scenario = load("launch-planning")
    budget = next(q for q in scenario.questions if q.id == "budget")
    assert grade(budget, "The budget is **€186\u00a0500**, all-in.").passed
    assert grade(budget, "€186.5k").passed
    assert not grade(budget, "€168,500").passed
    region = next(q for q in scenario.questions if q.id == "region")
    assert grade(region, "`eu\u2011north\u20111`").passed


def test_an_answer_must_match_every_pattern_and_says_which_it_missed():
    pricing = next(q for q in load("launch-planning").questions if q.id == "pricing")
    result = grade(pricing, "Usage-based at €0.045 per invoice through Paddle.")
    assert not result.passed and result.missing == ("(?<!\\d)390(?!\\d)",)


def test_a_reference_that_fails_its_own_patterns_is_refused():
    data = copy.deepcopy(raw("launch-planning"))
    data["questions"][0]["reference"] = "No idea."
    with pytest.raises(ScenarioError, match="reference answer fails"):
        parse(data)


def test_an_unknown_speaker_or_a_missing_field_is_refused():
    data = copy.deepcopy(raw("launch-planning"))
    data["parent"][0]["from"] = "nobody"
    with pytest.raises(ScenarioError, match="unknown speaker"):
        parse(data)
    data = copy.deepcopy(raw("launch-planning"))
    del data["questions"]
    with pytest.raises(ScenarioError, match="lacks 'questions'"):
        parse(data)


def test_costs_price_every_kind_of_token():
    usage = Usage(input_tokens=1_000_000, output_tokens=100_000, cache_read_tokens=2_000_000,
                  cache_write_tokens=400_000)
    # claude-sonnet-5-5: $2 in, $10 out, $0.10 cache read, $2.50 cache write (5 minutes)
    assert cost("claude-sonnet-5-5", [usage]) == pytest.approx(2.00 + 1.00 + 0.20 + 1.00)
    assert cost("claude-sonnet-5-5", [usage, usage]) == pytest.approx(8.40)


def test_dated_ids_find_their_model_and_unknown_models_have_no_cost():
    assert price_of("claude-haiku-4-5-20251001") == price_of("claude-haiku-4-5")
    assert price_of("claude-sonnet-5-5") != price_of("claude-sonnet-5")  # the longest prefix wins
    assert price_of("claude-sonnet-50") is None
    assert cost("some-other-model", [Usage(1000, 1000)]) is None


def test_a_long_prompt_changes_the_rate_of_that_request_only():
    short, long = Usage(input_tokens=100_000, output_tokens=1_000_000), Usage(input_tokens=100_001)
    assert cost("claude-haiku-5-5", [short]) == pytest.approx(0.01 + 0.50)
    assert cost("claude-haiku-5-5", [long]) == pytest.approx(100_001 * 0.50 / 1e6)


def test_the_recording_chat_answers_every_method_of_every_slack_port():
    chat = RecordingChat()
    methods = [name for port in CHAT_PORTS for name, f in vars(port).items()
               if not name.startswith("_") and callable(f)]
    assert len(methods) == len(set(methods)) >= 25  # no method in two ports
    for name in methods:
        assert callable(getattr(chat, name)), name


def test_the_recording_chat_records_each_call_with_its_arguments_in_order_and_a_ts_for_each():
    chat = RecordingChat()
    audience = Audience("T1", "C1", "U1")
    first = chat.post_notice(Place("C1", None, "T1", None), "hello")
    chat.tell(audience=audience, text="psst")  # keywords are recorded as the port orders them
    assert [(s.what, s.args) for s in chat.said] == [("post_notice", (Place("C1", None, "T1", None), "hello")),
                                                    ("tell", (audience, "psst"))]
    assert first == chat.said[0].ts and chat.said[0].ts != chat.said[1].ts and chat.told("U1") == ["psst"]


def test_the_recording_chat_refuses_a_call_its_port_would_not_take():
    chat = RecordingChat()
    with pytest.raises(TypeError):
        chat.tell(Audience("T1", "C1", "U1"))  # no text
    with pytest.raises(AttributeError):
        chat.post_message("C1", "hello")  # no port has it
    assert chat.said == []


def test_the_recording_chat_answers_look_ups_from_what_it_was_given():
    chat = RecordingChat(names={"U1": "alice"}, unnamed=lambda user_id: None)
    chat.admins.add("U1")
    chat.refuse.add("thread_messages")
    assert (chat.display_name("T1", "U1"), chat.display_name("T1", "U2")) == ("alice", None)
    assert chat.is_admin("T1", "U1") and not chat.is_admin("T1", "U2")
    with pytest.raises(ChatUnavailable):
        chat.thread_messages(Channel("T1", "C1"), "1.1")
