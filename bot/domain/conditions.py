"""Conditions on a stored row and changes to it, written once and read two ways: the SQL store turns
them into one UPDATE … WHERE (so a once-only move stays atomic across replicas), the in-memory store
checks and applies them under its lock.

Invariant: `holds` follows SQL's rules for a missing value (NULL): every comparison with it is
false, so `Is`, `Before`, `NotAfter` and `NotBefore` never hold for a missing field; only `Missing` does.
Fields are named as the sessions table's columns.
"""
from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any, Union


@dataclass(frozen=True)
class Is:
    """field = value"""

    field: str
    value: Any


@dataclass(frozen=True)
class OneOf:
    """field IN values"""

    field: str
    values: tuple


@dataclass(frozen=True)
class Missing:
    """field IS NULL"""

    field: str


@dataclass(frozen=True)
class Present:
    """field IS NOT NULL"""

    field: str


@dataclass(frozen=True)
class Before:
    """field < moment"""

    field: str
    moment: Any


@dataclass(frozen=True)
class NotAfter:
    """field <= moment"""

    field: str
    moment: Any


@dataclass(frozen=True)
class NotBefore:
    """field >= moment"""

    field: str
    moment: Any


@dataclass(frozen=True)
class Either:
    """Any of the conditions holds."""

    options: tuple[Condition, ...]


@dataclass(frozen=True)
class Both:
    """Every one of the conditions holds."""

    parts: tuple[Condition, ...]


Condition = Union[Is, OneOf, Missing, Present, Before, NotAfter, NotBefore, Either, Both]


@dataclass(frozen=True)
class Plus:
    """A change's value: the field's current value plus `amount` (a missing one counts as 0)."""

    amount: int


def holds(condition: Condition, row: Any) -> bool:
    """Whether `condition` holds for `row` (any object with the fields as attributes)."""
    match condition:
        case Is(field, value):
            return _value(row, field) is not None and _value(row, field) == value
        case OneOf(field, values):
            return _value(row, field) in values
        case Missing(field):
            return _value(row, field) is None
        case Present(field):
            return _value(row, field) is not None
        case Before(field, moment):
            return _value(row, field) is not None and _value(row, field) < moment
        case NotAfter(field, moment):
            return _value(row, field) is not None and _value(row, field) <= moment
        case NotBefore(field, moment):
            return _value(row, field) is not None and _value(row, field) >= moment
        case Either(options):
            return any(holds(c, row) for c in options)
        case Both(parts):
            return all(holds(c, row) for c in parts)
    raise TypeError(f"not a condition: {condition!r}")


def all_hold(conditions: Iterable[Condition], row: Any) -> bool:
    return all(holds(c, row) for c in conditions)


def changed(current: Any, value: Any) -> Any:
    """A field's new value under a change (`Plus` adds to the current one)."""
    return (current or 0) + value.amount if isinstance(value, Plus) else value


def apply(changes: Mapping[str, Any], row: Any) -> None:
    """Make the changes on an in-memory row (the SQL store sets the same values in its UPDATE)."""
    for field, value in changes.items():
        setattr(row, field, changed(getattr(row, field), value))


def _value(row: Any, field: str) -> Any:
    return getattr(row, field)
