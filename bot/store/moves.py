"""The domain's conditions and moves (bot/domain/conditions.py, transitions.py) as SQL: a condition
becomes a WHERE clause, a move one UPDATE … WHERE on the fork's row whose row count says whether it
was made. The decision stays in the domain; this module only spells it in SQL, so a move remains one
atomic statement however many replicas race for it."""
from __future__ import annotations

from collections.abc import Iterable, Mapping
from enum import Enum
from typing import Any

from sqlalchemy import and_, func, or_, update

from ..domain.conditions import Before, Both, Condition, Either, Is, Missing, NotAfter, NotBefore, OneOf, Plus, Present
from ..domain.transitions import Move
from .tables import sessions


def clause(condition: Condition, table=sessions):
    """One condition as a SQL expression on `table`'s columns."""
    match condition:
        case Is(field, value):
            return table.c[field] == _bound(value)
        case OneOf(field, values):
            return table.c[field].in_([_bound(v) for v in values])
        case Missing(field):
            return table.c[field].is_(None)
        case Present(field):
            return table.c[field].is_not(None)
        case Before(field, moment):
            return table.c[field] < moment
        case NotAfter(field, moment):
            return table.c[field] <= moment
        case NotBefore(field, moment):
            return table.c[field] >= moment
        case Either(options):
            return or_(*(clause(c, table) for c in options))
        case Both(parts):
            return and_(*(clause(c, table) for c in parts))
    raise TypeError(f"not a condition: {condition!r}")


def where(conditions: Iterable[Condition], table=sessions) -> list:
    return [clause(c, table) for c in conditions]


def values(changes: Mapping[str, Any], table=sessions) -> dict:
    """A move's changes as UPDATE values (`Plus` adds to the column's value in the same statement)."""
    return {field: func.coalesce(table.c[field], 0) + value.amount if isinstance(value, Plus) else _bound(value)
            for field, value in changes.items()}


def make(conn, fork_id: int, move: Move, returning=None, also: Iterable = ()):
    """Make the move on the fork's row in the caller's transaction: True if it was made (with
    `returning`, that column's new value, None if it was not). `also`: SQL conditions beyond the row's."""
    statement = (update(sessions).where(sessions.c.id == fork_id, *where(move.conditions), *also)
                 .values(**values(move.values)))
    if returning is not None:
        return conn.execute(statement.returning(returning)).scalar()
    return conn.execute(statement).rowcount == 1


def change_all(conn, conditions: Iterable[Condition], changes: Mapping[str, Any], table=sessions) -> int:
    """Change every row where the conditions hold, in one statement; how many were changed."""
    return conn.execute(update(table).where(*where(conditions, table)).values(**values(changes, table))).rowcount


def _bound(value: Any) -> Any:
    return value.value if isinstance(value, Enum) else value
