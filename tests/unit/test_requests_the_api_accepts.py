"""Every request builder produces what the Messages API accepts (the fake's rules, messages_rules.py):
no empty or blank block, a user's block first, at most four breakpoints — parent, inherited and
fresh forks, merges and compactions alike."""
import json

import pytest

from bot.domain.context import (EMPTY_ANSWER, MAX_BREAKPOINTS, OPENING, UNANSWERED, asking, compaction_input,
                                fork_input, parent_input, with_request)
from bot.domain.merge import merge_prompt
from bot.domain.model import Fork, ForkStatus, Mode, Role, Turn, TurnStatus
from bot.llm.claude import RequestEncoder
from tests.fakes.messages_rules import breakpoints, refusal


def turn(seq, role, text, session=1, status=TurnStatus.COMPLETE):
    user = role is Role.USER
    return Turn(session, seq, role, text, "UALICE01" if user else None, "alice" if user else None, status=status)


def fork(mode=Mode.INHERIT, point=4):
    return Fork(id=9, channel_id="C1", team_id="T1", number=3, parent_id=1, mode=mode, topic="pricing",
                owner_id="UALICE01", fork_point_seq=point, status=ForkStatus.OPEN)


# an empty answer and a blank one in the middle of each history
PARENT = [turn(1, Role.USER, "plan"), turn(2, Role.ASSISTANT, ""), turn(3, Role.USER, "again?"),
          turn(4, Role.ASSISTANT, " \n"), turn(5, Role.USER, "and now")]
OWN = [turn(1, Role.USER, "tiers?", session=9), turn(2, Role.ASSISTANT, "", session=9),
       turn(3, Role.USER, "well?", session=9)]

BUILDERS = {
    "parent": lambda: asking(parent_input(PARENT)),
    "inherited fork": lambda: asking(fork_input(fork(), PARENT[:4], OWN)),
    "fresh fork": lambda: asking(fork_input(fork(Mode.FRESH, None), [], OWN)),
    "merge of an inherited fork": lambda: with_request(fork_input(fork(), PARENT[:4], OWN), merge_prompt("U1", "")),
    "merge of a fresh fork": lambda: with_request(fork_input(fork(Mode.FRESH, None), [], OWN), merge_prompt("U1", "")),
    "compaction": lambda: compaction_input(PARENT[:4]),
}


@pytest.mark.parametrize("kind", BUILDERS)
def test_each_kind_of_request_is_one_the_api_accepts(kind):
    model_input = BUILDERS[kind]()
    encoder = RequestEncoder("m", 100)
    for body in (encoder.request(model_input), json.loads(encoder.encode(model_input))):
        assert refusal(body) is None, kind
        assert breakpoints(body) == model_input.breakpoints <= MAX_BREAKPOINTS
    assert model_input.blocks[0].role == "user"


def test_the_inherited_forks_request_keeps_its_three_breakpoints_system_prefix_end_and_last_block():
    model_input = asking(fork_input(fork(), PARENT[:4], OWN))
    marked = [i for i, block in enumerate(model_input.blocks) if block.breakpoint]
    assert model_input.breakpoints == 3 and marked == [3, len(model_input.blocks) - 1]


def test_an_empty_answer_is_a_fixed_placeholder_in_every_later_request():
    texts = [b.text for b in parent_input(PARENT).blocks]
    assert texts[1] == EMPTY_ANSWER and texts[3] == EMPTY_ANSWER
    assert parent_input(PARENT).blocks[1] is parent_input(PARENT).blocks[1]  # rendered once: byte-stable


def test_an_interrupted_empty_answer_is_marked_but_never_empty():
    cut = turn(2, Role.ASSISTANT, "", status=TurnStatus.INTERRUPTED)
    text = parent_input([turn(1, Role.USER, "hi"), cut, turn(3, Role.USER, "?")]).blocks[1].text
    assert text.startswith(EMPTY_ANSWER) and "interrupted" in text


def test_a_history_whose_first_turns_were_deleted_opens_with_a_users_block():
    model_input = parent_input([turn(2, Role.ASSISTANT, "an answer"), turn(3, Role.USER, "next")])
    assert model_input.blocks[0] is OPENING and refusal(RequestEncoder("m", 10).request(model_input)) is None


def test_asking_after_a_final_answer_adds_a_users_request_and_otherwise_changes_nothing():
    answered = parent_input(PARENT[:2] + [turn(3, Role.ASSISTANT, "trailing space ")])
    assert refusal(RequestEncoder("m", 10).request(answered)) is not None  # the API would refuse it as it is
    asked = asking(answered)
    assert asked.blocks[-1].text == UNANSWERED and refusal(RequestEncoder("m", 10).request(asked)) is None
    waiting = parent_input(PARENT)
    assert asking(waiting) is waiting


def test_more_breakpoints_than_the_api_allows_keep_the_latest():
    from bot.domain.context import Block, _finish

    marked = [Block("user" if i % 2 == 0 else "assistant", f"b{i}", breakpoint=True) for i in range(7)]
    model_input = _finish(marked)
    assert model_input.breakpoints == MAX_BREAKPOINTS
    assert [b.breakpoint for b in model_input.blocks] == [False] * 4 + [True] * 3
