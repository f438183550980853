"""Durations as people write them in settings: seconds (`90`) or with a unit (`90s`, `15m`, `24h`, `7d`)."""
from __future__ import annotations

import re

_UNITS = {"": 1, "s": 1, "m": 60, "h": 3600, "d": 86400}
_DURATION = re.compile(r"^\s*(\d+(?:\.\d+)?)\s*([smhd]?)\s*$", re.IGNORECASE)


def parse_duration(value: str | int | float, *, zero_ok: bool = False) -> float:
    """Seconds in `value`; raises ValueError with the accepted forms. `zero_ok`: `0` means "at once"."""
    if isinstance(value, (int, float)):
        seconds = float(value)
    else:
        match = _DURATION.match(value)
        if not match:
            raise ValueError(f"{value!r} is not a duration; use seconds or a unit: 90s, 15m, 24h, 7d")
        seconds = float(match.group(1)) * _UNITS[match.group(2).lower()]
    if seconds < 0 or (seconds == 0 and not zero_ok):
        raise ValueError("a duration must be positive")
    return seconds
