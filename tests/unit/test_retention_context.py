"""After the retention policy removed a session's earliest turns, its input starts with one note saying
so — the parent's, an inherited fork's (whose prefix lost them too) and a fork of a fork's alike —
and every such request is one the Messages API accepts (the fake's rules, messages_rules.py)."""
import json

import pytest

from bot.domain.context import OPENING, PRUNED, asking, compaction_input, fork_input, parent_input, with_request
from bot.domain.merge import merge_prompt
from bot.domain.model import Fork, ForkStatus, Mode, Role, Turn, TurnStatus
from bot.llm.claude import RequestEncoder
from tests.fakes.messages_rules import refusal


def turn(seq, role, text, session=1):
    user = role is Role.USER
    return Turn(session, seq, role, text, "UALICE01" if user else None, "alice" if user else None,
                TurnStatus.ANSWERED if user else TurnStatus.COMPLETE)


def fork(mode=Mode.INHERIT, point=6, pruned=0, number=3, depth=1, parent=None):
    return Fork(id=10 + number, channel_id="C1", team_id="T1", number=number, parent_id=parent.id if parent else 1,
                mode=mode, topic="pricing", owner_id="UALICE01", fork_point_seq=point, status=ForkStatus.OPEN,
                depth=depth, parent_number=parent.number if parent else None, pruned_before_seq=pruned)


# what is left of a parent whose turns 1–3 were removed: it starts with an answer whose question is gone
REMAINING = [turn(4, Role.ASSISTANT, "as I said, three tiers"), turn(5, Role.USER, "and the price?"),
             turn(6, Role.ASSISTANT, "10, 20, 50")]
OWN = [turn(1, Role.USER, "why 50?", session=13)]


def notes(model_input) -> int:
    return sum(1 for block in model_input.blocks if block.text == PRUNED.text)


def test_a_pruned_parents_input_starts_with_one_note_then_what_remains_in_order():
    model_input = parent_input(REMAINING + [turn(7, Role.USER, "ok")], pruned=True)
    assert model_input.blocks[0].text == PRUNED.text and notes(model_input) == 1
    assert [b.text for b in model_input.blocks[1:3]] == ["as I said, three tiers", "[alice <@UALICE01>]\nand the price?"]
    assert OPENING not in model_input.blocks  # the note is the user's block an answer may follow


def test_a_parent_never_pruned_has_no_note():
    assert notes(parent_input(REMAINING)) == 0 and parent_input(REMAINING).blocks[0] is OPENING


def test_an_inherited_fork_of_a_pruned_channel_has_the_note_once_and_the_parents_prefix_byte_for_byte():
    parent = parent_input(REMAINING, pruned=True)
    inherited = fork_input(fork(), REMAINING, OWN, channel_pruned=True)
    assert notes(inherited) == 1 and inherited.blocks[0] is parent.blocks[0]  # the very same note object
    strip = [b.content() | {"cache_control": None} for b in parent.blocks]
    assert [b.content() | {"cache_control": None} for b in inherited.blocks[:len(strip)]] == strip


def test_every_session_starts_with_the_same_note_in_every_request():
    first, again = parent_input(REMAINING, pruned=True), parent_input(REMAINING + OWN, pruned=True)
    other = parent_input([turn(8, Role.USER, "elsewhere", session=2)], pruned=True)
    assert first.blocks[0] == again.blocks[0] == other.blocks[0] == PRUNED  # the same bytes: the cache holds


def test_a_fork_whose_inherited_turns_were_all_removed_keeps_the_note_and_its_boundary():
    model_input = fork_input(fork(), [], OWN, channel_pruned=True)
    assert model_input.blocks[0].text == PRUNED.text and "background from the channel" in model_input.blocks[1].text
    assert model_input.blocks[2].text == "[alice <@UALICE01>]\nwhy 50?"


def test_a_fork_of_a_fork_with_several_pruned_levels_has_one_note_at_its_very_start():
    top = fork(pruned=2)
    kid = fork(point=1, pruned=3, number=7, depth=2, parent=top)
    model_input = fork_input(kid, REMAINING, [turn(3, Role.USER, "go on", session=17)],
                             ancestors=[(top, OWN)], channel_pruned=True)
    assert notes(model_input) == 1 and model_input.blocks[0].text == PRUNED.text


def test_a_fresh_fork_sees_nothing_of_the_channel_so_not_its_pruning_either():
    assert notes(fork_input(fork(Mode.FRESH, None), [], OWN, channel_pruned=True)) == 0
    assert notes(fork_input(fork(Mode.FRESH, None, pruned=2), [], OWN)) == 1


BUILDERS = {
    "parent": lambda: asking(parent_input(REMAINING + [turn(7, Role.USER, "ok")], pruned=True)),
    "parent with nothing left but a waiting question": lambda: asking(parent_input([turn(9, Role.USER, "hi")], True)),
    "inherited fork": lambda: asking(fork_input(fork(), REMAINING, OWN, channel_pruned=True)),
    "emptied inherited fork": lambda: asking(fork_input(fork(), [], OWN, channel_pruned=True)),
    "merge": lambda: with_request(fork_input(fork(), REMAINING, OWN, channel_pruned=True), merge_prompt("U1", "")),
    "compaction": lambda: compaction_input(REMAINING),
}


@pytest.mark.parametrize("kind", BUILDERS)
def test_each_request_after_pruning_is_one_the_api_accepts(kind):
    model_input = BUILDERS[kind]()
    encoder = RequestEncoder("m", 100)
    for body in (encoder.request(model_input), json.loads(encoder.encode(model_input))):
        assert refusal(body) is None, kind
        assert body["messages"][0]["role"] == "user"
        roles = [m["role"] for m in body["messages"]]
        assert all(a != b for a, b in zip(roles, roles[1:]))  # they alternate
