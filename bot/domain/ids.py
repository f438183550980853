"""Numbers and ids that come from people or payloads, checked before they reach the store.

- `row_id`: a fork id, a stored turn's id, a fork or draft number — a whole number from 1 to the store's
  integer range (PostgreSQL `integer`); anything else (a word, a negative, 20 digits) is None.
- `is_slack_id`: a channel, user, team id or a message ts as Slack writes them — letters, digits, `.`,
  `_` and `-`, at most 32 characters (the store's columns): no NUL, no list, no number.
"""
from __future__ import annotations

import re

MAX_ROW_ID = 2**31 - 1
_DIGITS = re.compile(r"[0-9]{1,10}")
_SLACK_ID = re.compile(r"[A-Za-z0-9._-]{1,32}")


def row_id(value: object) -> int | None:
    """`value` (a payload's string, or a number) as a store id or number; None when it can't be one."""
    if isinstance(value, bool) or not isinstance(value, (str, int)):
        return None
    text = str(value).strip()
    if not _DIGITS.fullmatch(text):
        return None
    number = int(text)
    return number if 1 <= number <= MAX_ROW_ID else None


def is_slack_id(value: object) -> bool:
    return isinstance(value, str) and _SLACK_ID.fullmatch(value) is not None
