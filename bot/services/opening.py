"""Waiting for a fork's opening to be recorded. Slack shows a message to people before its poster has Slack's
answer, so a click on a new root, or a first message in its thread, can arrive before the opener (this process
or another) has stored the root's ts. Both wait here, OPENING_WAIT at most, reading the store again."""
from __future__ import annotations

import time
from collections.abc import Callable
from typing import TypeVar

OPENING_WAIT = 5.0  # seconds a gesture or a message waits for its fork's opening to be recorded

T = TypeVar("T")


def once_opened(value: T, opened: Callable[[T], bool], read: Callable[[], T]) -> T:
    """`value` once `opened(value)`, else read again every 50 ms until it is or OPENING_WAIT has passed."""
    deadline = time.monotonic() + OPENING_WAIT
    while not opened(value) and time.monotonic() < deadline:
        time.sleep(0.05)
        value = read()
    return value
