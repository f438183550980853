"""Conditions and changes on a row (bot/domain/conditions.py) follow SQL's rules, so the memory store
and the SQL store decide alike."""
from types import SimpleNamespace

import pytest

from bot.domain.conditions import (Before, Both, Either, Is, Missing, NotAfter, NotBefore, OneOf, Plus, Present, apply,
                                   holds)


def row(**fields):
    return SimpleNamespace(**fields)


@pytest.mark.parametrize("condition", [Is("x", None), Before("x", 5), NotAfter("x", 5), NotBefore("x", 5),
                                       OneOf("x", (1, 2))])
def test_a_comparison_with_a_missing_value_never_holds_as_in_sql(condition):
    assert not holds(condition, row(x=None))


def test_missing_and_present_are_the_only_questions_a_missing_value_answers():
    assert holds(Missing("x"), row(x=None)) and not holds(Present("x"), row(x=None))
    assert holds(Present("x"), row(x=0)) and not holds(Missing("x"), row(x=0))


def test_before_is_strict_and_not_after_includes_the_moment():
    assert not holds(Before("x", 5), row(x=5)) and holds(NotAfter("x", 5), row(x=5))
    assert holds(Before("x", 5), row(x=4)) and not holds(NotAfter("x", 5), row(x=6))


def test_not_before_includes_the_moment_and_is_befores_opposite_for_a_present_value():
    assert holds(NotBefore("x", 5), row(x=5)) and holds(NotBefore("x", 5), row(x=6))
    assert not holds(NotBefore("x", 5), row(x=4))


def test_either_needs_one_and_both_need_every_part():
    r = row(x=1, y=None)
    assert holds(Either((Is("x", 2), Missing("y"))), r) and not holds(Either((Is("x", 2), Present("y"))), r)
    assert holds(Both((Is("x", 1), Missing("y"))), r) and not holds(Both((Is("x", 1), Present("y"))), r)


def test_a_change_sets_values_and_plus_adds_to_what_is_there_counting_missing_as_zero():
    r = row(x=1, y=None, z=5)
    apply({"x": "new", "y": Plus(3), "z": Plus(2)}, r)
    assert (r.x, r.y, r.z) == ("new", 3, 7)


def test_something_that_is_not_a_condition_is_refused():
    with pytest.raises(TypeError):
        holds("x = 1", row(x=1))
