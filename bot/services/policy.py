"""The knobs use cases obey, taken from Settings at wiring time; the defaults here are the only ones
(Settings and the README state the same)."""
from __future__ import annotations

from dataclasses import dataclass

from ..domain.errors import NotAllowed
from ..domain.merge import EXPIRY_ACTOR
from ..domain.model import Fork


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
    max_file_bytes: int = 32 * 1024 * 1024  # one shared file
    max_fork_depth: int = 3  # forks of forks of forks; 1 = only forks of the channel's conversation
    retention_after_uninstall: float = 30 * 86400.0  # a departed workspace's conversations; 0 = at once

    def check(self, fork: Fork, user_id: str, verb: str) -> None:
        """Under the `owner` policy only the fork's owner (or the expiry) may close it or raise its budget."""
        if self.merge_policy == "owner" and user_id not in (fork.owner_id, EXPIRY_ACTOR):
            raise NotAllowed(f"Only <@{fork.owner_id}>, who opened fork {fork.label}, may {verb} it here.")
