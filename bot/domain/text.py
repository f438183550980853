"""Text as it crosses the bot's edges (Slack in, Claude out): what no database can store is removed
or replaced, so a person's message or a model's answer can never poison a session (PostgreSQL
refuses NUL in text; a lone UTF-16 surrogate cannot be encoded at all)."""
from __future__ import annotations

import re

_NUL = "\x00"
_SURROGATE = re.compile("[\ud800-\udfff]")
REPLACEMENT = "\ufffd"


def storable(text: str) -> str:
    """`text` without NUL characters, each lone surrogate replaced by U+FFFD."""
    if _NUL in text:
        text = text.replace(_NUL, "")
    return _SURROGATE.sub(REPLACEMENT, text)
