"""The knobs use cases obey, taken from Settings at wiring time; the defaults here are the only ones
(Settings and the README state the same)."""
from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class Policy:
    merge_policy: str = "anyone"  # or "owner": only the fork's owner may merge or abandon it
    fork_token_budget: int | None = None
    compact_at: int = 160_000
    idle_reminder: float = 24 * 3600.0
    expiry: float = 7 * 86400.0
    expiry_policy: str = "merge"
    lease: float = 30.0  # a claim (reply, merge, delivery) outlives its holder's last heartbeat by this much
    stall_grace: float = 30.0  # a turn pending this long with nobody answering is picked up
