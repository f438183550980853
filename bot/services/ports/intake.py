"""What arrives: deliveries kept until answered (Inbox) and keys that let a thing happen once (Claims)."""
from __future__ import annotations

from collections.abc import Collection
from datetime import datetime
from typing import Protocol

from ...domain.model import Channel
from .values import Kept, Standing


class Claims(Protocol):
    def claim(self, key: str) -> bool:
        """True for the first caller with this key, False for every later one (any replica), for a day."""
    def mark(self, key: str) -> bool:
        """`claim`, forever: for what must never happen twice however late it is asked again."""
    def prune(self, before: datetime) -> int: ...


class Inbox(Protocol):
    def keep(self, key: str, payload: str, claim_seconds: float) -> bool:
        """Record a delivery, claimed for processing by the caller; False if it was kept before."""
    def keep_and_read(self, key: str, payload: str, claim_seconds: float, channel: Channel) -> Standing | None:
        """`keep`, and in the same transaction what a turn in `channel` reads of it (Spending.chosen); None if
        it was kept before."""
    def done(self, key: str) -> None:
        """Processed (or given up): its body goes, its key stays to turn redeliveries away."""
    def due(self, limit: int = 100) -> list[str]:
        """Kept deliveries not done whose processing claim expired (their process died)."""
    def take(self, key: str, claim_seconds: float) -> Kept | None:
        """Claim a due delivery for replay; one caller wins."""
    def renew(self, keys: Collection[str], claim_seconds: float) -> None: ...
    def release(self, keys: Collection[str]) -> None:
        """Give up the claims at once (shutting down): another process replays them."""
    def prune(self, before: datetime) -> int:
        """Forget deliveries done before then."""
