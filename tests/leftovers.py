"""Where words are left: every column of every table of a database (its schema reflected, so a table or
column added later is scanned too), read straight from SQLite or PostgreSQL, searched for marker strings."""
from __future__ import annotations

import json

from sqlalchemy import MetaData, create_engine, select


def holding(database_url: str, *markers: str) -> dict[str, list[str]]:
    """{marker: ["table.column", …]} for each marker some stored value contains (text, bytes or JSON)."""
    engine = create_engine(database_url)
    found: dict[str, set[str]] = {}
    try:
        schema = MetaData()
        schema.reflect(engine)
        with engine.connect() as conn:
            for table in schema.sorted_tables:
                for row in conn.execute(select(table)).mappings():
                    for column, value in row.items():
                        shown = _as_text(value)
                        for marker in markers:
                            if shown is not None and marker in shown:
                                found.setdefault(marker, set()).add(f"{table.name}.{column}")
    finally:
        engine.dispose()
    return {marker: sorted(places) for marker, places in found.items()}


def _as_text(value) -> str | None:
    if isinstance(value, str):
        return value
    if isinstance(value, (bytes, bytearray, memoryview)):
        return bytes(value).decode("utf-8", errors="replace")
    if isinstance(value, (dict, list)):
        return json.dumps(value, ensure_ascii=False)
    return None
