"""The writes on every turn's path, run straight on the transaction's DBAPI cursor (SQLite).

SQLAlchemy's execution of a statement it has cached (the compiled-cache lookup, whose key is a deep tuple
hashed anew each time, the execution context, the result object) costs several times what SQLite takes to run
it, and a turn makes a dozen such writes. A `Quick` write is compiled once per database kind and set of
parameter names, its values processed by its columns' own types, and run on the cursor of the caller's
transaction: the same SQL, the same stored values, a failure raised as SQLAlchemy's exception (IntegrityError
and the rest; its parameters hidden, as people's words may be among them). On PostgreSQL it is SQLAlchemy's
own execute (psycopg's errors, disconnects and the pool's invalidation stay SQLAlchemy's to handle).

Only writes: `run` gives the row count, `scalar` the integer a RETURNING of one integer column gives.
A statement this cannot run as SQLAlchemy would — an IN list expanded per call, a default computed in Python,
a result needing conversion — is refused when first compiled, so every use is checked by the store's tests.
"""
from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from sqlalchemy import Integer
from sqlalchemy.exc import DBAPIError

_FAST = "sqlite"


class Quick:
    def __init__(self, statement: Any):
        """`statement`: one Core write, or one per database kind ({"sqlite": …, "postgresql": …})."""
        self.statements = statement if isinstance(statement, Mapping) else None
        self.statement = None if isinstance(statement, Mapping) else statement
        self._plans: dict[tuple[str, ...], _Plan] = {}

    def run(self, conn, params: dict) -> int:
        """Execute in `conn`'s transaction; the number of rows it wrote."""
        dialect = conn.dialect
        if dialect.name != _FAST:
            return conn.execute(self._for(dialect.name), params).rowcount
        return self._plan(dialect, params).execute(conn, params).rowcount

    def scalar(self, conn, params: dict) -> int:
        """Execute in `conn`'s transaction; the integer its RETURNING gives for its one row."""
        dialect = conn.dialect
        if dialect.name != _FAST:
            return conn.execute(self._for(dialect.name), params).scalar_one()
        plan = self._plan(dialect, params)
        if not plan.returns_integer:
            raise TypeError("scalar() needs a statement RETURNING one integer column")
        row = plan.execute(conn, params).fetchone()
        if row is None:
            raise LookupError("the statement returned no row")
        return row[0]

    def _for(self, dialect_name: str):
        return self.statements[dialect_name] if self.statements is not None else self.statement

    def _plan(self, dialect, params: dict) -> _Plan:
        keys = tuple(sorted(params))
        plan = self._plans.get(keys)
        if plan is None:
            plan = self._plans[keys] = _Plan(self._for(dialect.name), dialect, keys)
        return plan


class _Plan:
    """One statement compiled for SQLite and one set of parameter names: its SQL, and how each positional value
    is found (a parameter, the statement's own constant, a column's scalar default) and processed."""

    def __init__(self, statement, dialect, keys: tuple[str, ...]):
        compiled = statement.compile(dialect=dialect, column_keys=list(keys))
        if not compiled.positional or compiled.post_compile_params or compiled.literal_execute_params:
            raise TypeError(f"not a plain positional statement: {compiled.string}")
        defaults = {}
        for column in (*compiled.insert_prefetch, *compiled.update_prefetch):
            if column.default is None or not column.default.is_scalar:
                raise TypeError(f"column {column.key} has a default computed in Python")
            defaults[column.key] = column.default.arg
        self.sql = compiled.string
        self.dbapi_error = dialect.loaded_dbapi.Error
        self.dialect = dialect
        self.steps = []
        for name in compiled.positiontup:
            bind = compiled.binds[name]
            process = bind.type.dialect_impl(dialect).bind_processor(dialect)
            if name in keys:
                self.steps.append((name, None, process))
            elif name in defaults:
                self.steps.append((None, defaults[name], process))
            elif not bind.required and bind.callable is None:
                self.steps.append((None, bind.value, process))
            else:
                raise TypeError(f"no value for bind parameter {name!r}")
        returning = compiled.returning or []
        self.returns_integer = len(returning) == 1 and isinstance(returning[0].type, Integer)
        if returning and not self.returns_integer:
            raise TypeError("only a RETURNING of one integer column is read here")

    def execute(self, conn, params: dict):
        values = []
        for name, constant, process in self.steps:
            value = params[name] if name is not None else constant
            values.append(process(value) if process is not None and value is not None else value)
        try:
            return conn.connection.dbapi_connection.execute(self.sql, values)
        except self.dbapi_error as error:
            raise DBAPIError.instance(self.sql, None, error, self.dbapi_error, hide_parameters=True,
                                      dialect=self.dialect) from error
