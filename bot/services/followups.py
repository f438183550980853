"""Slack updates that follow a change already stored (a thread note, a root refreshed, a draft settled):
a failure is logged and the use case goes on — the change stands, and what people see catches up."""
from __future__ import annotations

import logging

log = logging.getLogger(__name__)


def safely(call, *args) -> None:
    try:
        call(*args)
    except Exception:
        log.exception("a follow-up Slack update failed (%s)", getattr(call, "__name__", call))
