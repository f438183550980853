"""Waiting for a fork's opening to be recorded. Slack shows a message to people before its poster has Slack's
answer, so a click on a new root, or a first message in its thread, can arrive before the opener (this process
or another) has stored the root's ts. Both wait here, reading the store again until the opening is recorded.

A fork is made leased to its opener, its topic stored as its first turn, before its root is posted (Forks.open):
a thread's message waits as long as an opening of its channel is under way (`Standing.opening`: its opener
alive, renewing that lease), so however slow the opener is, the message finds its fork and queues behind the
topic. The opening ends recorded, failed (the fork abandoned) or with its opener dead (the lease lapsed):
then nothing is waited for. OPENER_LIMIT only keeps a worker from waiting on an opener stuck in a call.
"""
from __future__ import annotations

import time
from collections.abc import Callable
from typing import TypeVar

OPENING_WAIT = 5.0  # seconds a click on a root waits for its fork's opening to be recorded
OPENER_LIMIT = 60.0  # seconds a thread's message waits at most on an opening still under way

T = TypeVar("T")


def once_opened(value: T, opened: Callable[[T], bool], read: Callable[[], T], limit: float = OPENING_WAIT) -> T:
    """`value` once `opened(value)`, else read again every 50 ms until it is or `limit` seconds have passed."""
    deadline = time.monotonic() + limit
    while not opened(value) and time.monotonic() < deadline:
        time.sleep(0.05)
        value = read()
    return value
