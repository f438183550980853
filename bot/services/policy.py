"""The knobs use cases obey, taken from Settings at wiring time; the defaults here are the only ones
(Settings and the README state the same)."""
from __future__ import annotations

from dataclasses import dataclass, replace

from ..domain.errors import NotAllowed
from ..domain.merge import EXPIRY_ACTOR
from ..domain.model import Channel, Fork
from ..domain.settings import ChannelSettings
from .ports import Store


@dataclass(frozen=True)
class Policy:
    merge_policy: str = "anyone"  # or "owner": only the fork's owner may merge or abandon it
    fork_token_budget: int | None = None
    compact_at: int = 160_000
    idle_reminder: float = 24 * 3600.0
    expiry: float = 7 * 86400.0
    expiry_policy: str = "merge"
    retention: float | None = None  # seconds turns and closed forks are kept; None: forever
    lease: float = 30.0  # a claim (reply, merge, delivery) outlives its holder's last heartbeat by this much
    stall_grace: float = 30.0  # a turn pending this long with nobody answering is picked up
    max_file_bytes: int = 32 * 1024 * 1024  # one shared file
    max_fork_depth: int = 3  # forks of forks of forks; 1 = only forks of the channel's conversation
    retention_after_uninstall: float = 30 * 86400.0  # a departed workspace's conversations; 0 = at once
    merge_review: bool = False  # a merge gesture first posts a draft summary people approve, edit or redraft

    def reviewed(self, fork: Fork) -> bool:
        """Whether a merge of this fork waits for its draft summary to be approved (the one seam for the
        setting; an idle fork's expiry then drafts too, and waits)."""
        return self.merge_review

    def for_channel(self, chosen: ChannelSettings) -> Policy:
        """This policy with what a channel's admins chose over it (a budget of 0: none there)."""
        budget = self.fork_token_budget if chosen.fork_token_budget is None else (chosen.fork_token_budget or None)
        return replace(self, fork_token_budget=budget, merge_policy=_chosen(chosen.merge_policy, self.merge_policy),
                       idle_reminder=_chosen(chosen.idle_reminder, self.idle_reminder),
                       expiry=_chosen(chosen.expiry, self.expiry), merge_review=_chosen(chosen.merge_review,
                                                                                         self.merge_review))

    def as_channel_settings(self, model: str | None, tools: tuple[str, ...] | None) -> ChannelSettings:
        """The defaults a channel's settings start from, as its settings modal shows them."""
        return ChannelSettings(instructions=None, model=model, fork_token_budget=self.fork_token_budget or 0,
                               merge_policy=self.merge_policy, enabled=True, idle_reminder=self.idle_reminder,
                               expiry=self.expiry, tools=tools, merge_review=self.merge_review)

    def check(self, fork: Fork, user_id: str, verb: str) -> None:
        """Under the `owner` policy only the fork's owner (or the expiry) may close it or raise its budget."""
        if self.merge_policy == "owner" and user_id not in (fork.owner_id, EXPIRY_ACTOR):
            raise NotAllowed(f"Only <@{fork.owner_id}>, who opened fork {fork.label}, may {verb} it here.")


class Policies:
    """Each channel's policy: the environment's (`base`), with what the channel's admins chose over it.
    Read at each use, so a save takes effect at the channel's next turn on every replica."""

    def __init__(self, base: Policy, store: Store, defaults: ChannelSettings = ChannelSettings()):
        self.base = base
        self.store = store
        self.defaults = defaults  # the environment's model, tools…: what a fork opened now keeps, unless chosen

    def of(self, channel: Channel, chosen: ChannelSettings | None = None) -> Policy:
        """`chosen`: the channel's settings, when the caller has read them already."""
        return self.base.for_channel(self.store.channel_settings.of(channel) if chosen is None else chosen)

    def shortest(self) -> tuple[float, float]:
        """The shortest idle reminder and expiry in force anywhere: how far back the sweep looks."""
        idle, expiry = self.store.channel_settings.shortest()
        return min(self.base.idle_reminder, idle or self.base.idle_reminder), min(self.base.expiry,
                                                                                   expiry or self.base.expiry)


def _chosen(value, default):
    return default if value is None else value
