"""Sizes as people write them in settings: bytes (`1048576`) or with a unit (`512KB`, `20MB`, `1GB`)."""
from __future__ import annotations

import re

_UNITS = {"": 1, "b": 1, "kb": 1024, "mb": 1024 ** 2, "gb": 1024 ** 3}
_SIZE = re.compile(r"^\s*(\d+(?:\.\d+)?)\s*([kmg]?b?)\s*$", re.IGNORECASE)


def parse_size(value: str | int) -> int:
    """Bytes in `value`; raises ValueError with the accepted forms."""
    if isinstance(value, int):
        size = value
    else:
        match = _SIZE.match(str(value))
        if not match:
            raise ValueError(f"{value!r} is not a size; use bytes or a unit: 512KB, 20MB, 1GB")
        size = int(float(match.group(1)) * _UNITS[match.group(2).lower()])
    if size <= 0:
        raise ValueError("a size must be positive")
    return size
