"""The knobs use cases obey, taken from Settings at wiring time (bot/app.py); the defaults here are the
only ones (Settings and the README state the same).

What a channel's admins may change (`/threadfork`) is a `ChannelSettings` — the environment's values in
`Policy.channel`, a channel's choices laid over them by `for_channel` — so a new channel setting is named
in Settings, its ChannelSettings field, the modal and the table, and nowhere here."""
from __future__ import annotations

from dataclasses import dataclass, fields, replace

from ..domain.caching import CacheMode
from ..domain.errors import NotAllowed
from ..domain.merge import EXPIRY_ACTOR
from ..domain.model import Channel, Fork
from ..domain.settings import BUILT_IN, ChannelSettings
from .ports import ChannelSettingsStore


@dataclass(frozen=True)
class Policy:
    channel: ChannelSettings = BUILT_IN  # what a channel follows where its admins chose nothing
    compact_at: int = 160_000
    expiry_policy: str = "merge"
    retention: float | None = None  # seconds turns and closed forks are kept; None: forever
    lease: float = 30.0  # a claim (reply, merge, delivery) outlives its holder's last heartbeat by this much
    stall_grace: float = 30.0  # a turn pending this long with nobody answering is picked up
    max_file_bytes: int = 32 * 1024 * 1024  # one shared file
    max_fork_depth: int = 3  # forks of forks of forks; 1 = only forks of the channel's conversation
    retention_after_uninstall: float = 30 * 86400.0  # a departed workspace's conversations; 0 = at once
    cache_ttl: CacheMode = CacheMode.AUTO  # how prompt-cache breakpoints' TTLs are chosen (bot/domain/caching.py)

    @classmethod
    def knobs(cls, **values) -> Policy:
        """A policy from knobs by name, a channel setting's among them: `Policy.knobs(merge_policy="owner",
        compact_at=1_000)`."""
        channel = {name: values.pop(name) for name in list(values) if name in _CHANNEL_FIELDS}
        return cls(channel=replace(BUILT_IN, **channel), **values)

    @property
    def merge_policy(self) -> str:
        return self.channel.merge_policy

    @property
    def fork_token_budget(self) -> int | None:
        return self.channel.fork_token_budget or None

    @property
    def idle_reminder(self) -> float:
        return self.channel.idle_reminder

    @property
    def expiry(self) -> float:
        return self.channel.expiry

    def reviewed(self, fork: Fork) -> bool:
        """Whether a merge of this fork waits for its draft summary to be approved (the one seam for the
        setting; an idle fork's expiry then drafts too, and waits). A private fork always does: only what its
        owner approves reaches the channel."""
        return fork.private or bool(self.channel.merge_review)

    def for_channel(self, chosen: ChannelSettings) -> Policy:
        """This policy with what a channel's admins chose over it (a budget of 0: none there)."""
        return replace(self, channel=chosen.over(self.channel))

    def check(self, fork: Fork, user_id: str, verb: str) -> None:
        """Under the `owner` policy only the fork's owner (or the expiry) may close it or raise its budget; a
        private fork's owner only, whatever the policy (Slack shows it to nobody else, but a payload may say
        otherwise)."""
        if fork.private and user_id not in (fork.owner_id, EXPIRY_ACTOR):
            raise NotAllowed(not_theirs(fork, f"{verb} it"))
        if self.merge_policy == "owner" and user_id not in (fork.owner_id, EXPIRY_ACTOR):
            raise NotAllowed(f"Only <@{fork.owner_id}>, who opened fork {fork.label}, may {verb} it here.")


def not_theirs(fork: Fork, what: str) -> str:
    """Why someone other than a private fork's owner may not act on it."""
    return f"This private fork is <@{fork.owner_id}>'s: only they may {what}."


class Policies:
    """Each channel's policy: the environment's (`base`), with what the channel's admins chose over it.
    Read at each use, so a save takes effect at the channel's next turn on every replica."""

    def __init__(self, base: Policy, defaults: ChannelSettings = ChannelSettings(),
                 *, channel_settings: ChannelSettingsStore):
        self.base = base
        self.channel_settings = channel_settings
        self.defaults = defaults  # the environment's model, tools…: what a fork opened now keeps, unless chosen

    def of(self, channel: Channel, chosen: ChannelSettings | None = None) -> Policy:
        """`chosen`: the channel's settings, when the caller has read them already."""
        return self.base.for_channel(self.channel_settings.of(channel) if chosen is None else chosen)

    def shortest(self) -> tuple[float, float]:
        """The shortest idle reminder and expiry in force anywhere: how far back the sweep looks."""
        idle, expiry = self.channel_settings.shortest()
        return min(self.base.idle_reminder, idle or self.base.idle_reminder), min(self.base.expiry,
                                                                                   expiry or self.base.expiry)


_CHANNEL_FIELDS = {f.name for f in fields(ChannelSettings)}
