"""The statements on every turn's path, run straight on the transaction's DBAPI cursor (SQLite).

SQLAlchemy's execution of a statement it has cached (the compiled-cache lookup, whose key is a deep tuple
hashed anew each time, the execution context, the result object) costs several times what SQLite takes to run
it, and a turn makes some twenty such statements. A `Quick` statement is compiled once per database kind and set
of parameter names, its values processed by its columns' own types, and run on the cursor of the caller's
transaction: the same SQL, the same stored values, the rows it returns converted by their columns' types into
named tuples, a failure raised as SQLAlchemy's exception (IntegrityError and the rest; its parameters hidden, as
people's words may be among them). On PostgreSQL it is SQLAlchemy's own execute (psycopg's errors, disconnects
and the pool's invalidation stay SQLAlchemy's to handle).

`execute` answers with what the store reads of a result: `one`, `first`, `all`, `scalar`, `scalar_one`,
`rowcount`. A statement this cannot run as SQLAlchemy would (an IN list expanded per call, a default computed in
Python, result columns without names of their own) is refused when first compiled, so every use is checked by
the store's tests; `QuickIn` runs one with an IN list as a variant per list length.
"""
from __future__ import annotations

from collections import namedtuple
from collections.abc import Callable, Mapping
from typing import Any

from sqlalchemy import bindparam
from sqlalchemy.exc import DBAPIError, MultipleResultsFound, NoResultFound

_FAST = "sqlite"


class Quick:
    def __init__(self, statement: Any):
        """`statement`: one Core statement, or one per database kind ({"sqlite": …, "postgresql": …})."""
        self.statements = statement if isinstance(statement, Mapping) else None
        self.statement = None if isinstance(statement, Mapping) else statement
        self._plans: dict[tuple[str, ...], _Plan] = {}

    def execute(self, conn, params: dict):
        """Run in `conn`'s transaction: SQLAlchemy's result, or on SQLite a `Rows` answering the same questions."""
        dialect = conn.dialect
        if dialect.name != _FAST:
            return conn.execute(self.for_dialect(dialect.name), params)
        keys = tuple(sorted(params))
        plan = self._plans.get(keys)
        if plan is None:
            plan = self._plans[keys] = _Plan(self.for_dialect(dialect.name), dialect, keys)
        return plan.execute(conn, params)

    def for_dialect(self, dialect_name: str):
        return self.statements[dialect_name] if self.statements is not None else self.statement


class QuickIn:
    """A statement with one IN list, as `make(values)` builds it around `values`: a Quick variant per length of
    the list (its members bound one by one, named `<name>_<i>`) up to MOST, beyond that (or for an empty list)
    SQLAlchemy's IN list expanded per call."""

    MOST = 16

    def __init__(self, make: Callable[[Any], Any], name: str):
        self.make, self.name = make, name
        self._variants: dict[int, Quick] = {}
        self._expanding = make(bindparam(name, expanding=True))

    def execute(self, conn, params: dict):
        values = list(params[self.name])
        if not 0 < len(values) <= self.MOST:
            return conn.execute(self._expanding, params)
        quick = self._variants.get(len(values))
        if quick is None:
            names = [f"{self.name}_{i}" for i in range(len(values))]
            quick = self._variants[len(values)] = Quick(self.make([bindparam(n) for n in names]))
        spread = {key: value for key, value in params.items() if key != self.name}
        spread.update((f"{self.name}_{i}", value) for i, value in enumerate(values))
        return quick.execute(conn, spread)


class Rows:
    """A statement's result on SQLite, as far as the store reads results."""

    def __init__(self, cursor, plan: _Plan):
        self.rowcount = cursor.rowcount
        self._cursor, self._plan = cursor, plan

    def all(self) -> list:
        return [self._plan.row(raw) for raw in self._cursor.fetchall()]

    def first(self):
        raw = self._cursor.fetchone()
        self._cursor.close()  # as SQLAlchemy's first(): the rest is never read, so the statement ends here
        return None if raw is None else self._plan.row(raw)

    def one(self):
        rows = self._cursor.fetchmany(2)
        self._cursor.close()
        if len(rows) != 1:
            raise NoResultFound("No row was found when one was required") if not rows else \
                MultipleResultsFound("Multiple rows were found when exactly one was required")
        return self._plan.row(rows[0])

    def scalar(self):
        row = self.first()
        return None if row is None else row[0]

    def scalar_one(self):
        return self.one()[0]


class _Plan:
    """One statement compiled for SQLite and one set of parameter names: its SQL, how each positional value is
    found (a parameter, the statement's own constant, a column's scalar default) and processed, and how each
    returned column is converted."""

    def __init__(self, statement, dialect, keys: tuple[str, ...]):
        compiled = statement.compile(dialect=dialect, column_keys=list(keys))
        if not compiled.positional or compiled.post_compile_params or compiled.literal_execute_params:
            raise TypeError(f"not a plain positional statement: {compiled.string}")
        self.sql = compiled.string
        self.dbapi_error = dialect.loaded_dbapi.Error
        self.dialect = dialect
        self.steps = _steps(compiled, dialect, keys)
        columns = list(statement.exported_columns)
        names = [column.key for column in columns]
        if len(set(names)) != len(names) or not all(isinstance(n, str) and n.isidentifier() for n in names):
            raise TypeError(f"result columns without names of their own: {names}")
        self.shape = namedtuple("Row", names) if names else None
        self.converters = [column.type.dialect_impl(dialect).result_processor(dialect, None) for column in columns]
        self.plain = not any(self.converters)

    def execute(self, conn, params: dict) -> Rows:
        values = []
        for name, constant, process in self.steps:
            value = params[name] if name is not None else constant
            values.append(process(value) if process is not None and value is not None else value)
        try:
            return Rows(conn.connection.dbapi_connection.execute(self.sql, values), self)
        except self.dbapi_error as error:
            raise DBAPIError.instance(self.sql, None, error, self.dbapi_error, hide_parameters=True,
                                      dialect=self.dialect) from error

    def row(self, raw: tuple):
        if self.plain:
            return self.shape._make(raw)
        return self.shape._make([value if convert is None or value is None else convert(value)
                                 for convert, value in zip(self.converters, raw)])


def _steps(compiled, dialect, keys: tuple[str, ...]) -> list:
    defaults = {}
    for column in (*compiled.insert_prefetch, *compiled.update_prefetch):
        if column.default is None or not column.default.is_scalar:
            raise TypeError(f"column {column.key} has a default computed in Python")
        defaults[column.key] = column.default.arg
    steps = []
    for name in compiled.positiontup:
        bind = compiled.binds[name]
        process = bind.type.dialect_impl(dialect).bind_processor(dialect)
        if name in keys:
            steps.append((name, None, process))
        elif name in defaults:
            steps.append((None, defaults[name], process))
        elif not bind.required and bind.callable is None:
            steps.append((None, bind.value, process))
        else:
            raise TypeError(f"no value for bind parameter {name!r}")
    return steps
