"""Who is in a channel, and its name: the Channels port, for private forks of a channel (the agent pane).

- `membership`: conversations.info (its name; whether the bot is in it) and, when the bot is, the pages
  of conversations.members until the person is found — read once per private fork, never per turn. A
  channel the bot cannot see (private, without it) counts as one it is not in. A negative answer is kept
  NEGATIVE_TTL seconds, so someone writing on beside a channel they may not fork costs no read per message.
- `channel_name`: conversations.info, kept NAME_TTL seconds (the suggested prompts name the channel).
Slack's other refusals and failures raise ChatUnavailable (the gateway explains them).
"""
from __future__ import annotations

import threading
import time
from collections.abc import Callable

from slack_sdk.errors import SlackApiError

from ..domain.errors import ChatUnavailable
from ..domain.model import Channel
from ..services.ports import Membership
from .clients import Clients
from .clients import FAILURES, failure_code

NEGATIVE_TTL = 60.0
NAME_TTL = 3600.0
PAGE = 1_000  # members per conversations.members page (Slack's most)
UNSEEN = {"channel_not_found", "not_in_channel"}


class ChannelFacts:
    def __init__(self, clients: Clients, clock: Callable[[], float] = time.monotonic):
        self.clients = clients
        self.clock = clock
        self._refused: dict[tuple[Channel, str], tuple[Membership, float]] = {}
        self._names: dict[Channel, tuple[str | None, float]] = {}
        self._lock = threading.Lock()

    def membership(self, channel: Channel, user_id: str) -> Membership:
        with self._lock:
            kept = self._refused.get((channel, user_id))
        if kept and self.clock() - kept[1] < NEGATIVE_TTL:
            return kept[0]
        found = self._read(channel, user_id)
        if not (found.bot_in and found.person_in):
            with self._lock:
                self._refused[(channel, user_id)] = (found, self.clock())
        return found

    def channel_name(self, channel: Channel) -> str | None:
        with self._lock:
            kept = self._names.get(channel)
        if kept and self.clock() - kept[1] < NAME_TTL:
            return kept[0]
        try:
            name = self._info(channel).get("name")
        except ChatUnavailable:
            return None
        with self._lock:
            self._names[channel] = (name, self.clock())
        return name

    def _read(self, channel: Channel, user_id: str) -> Membership:
        info = self._info(channel)
        if not info.get("is_member"):
            return Membership(info.get("name"), bot_in=False, person_in=False)
        client = self.clients.for_team(channel.team_id)
        try:
            for page in client.conversations_members(channel=channel.id, limit=PAGE):  # follows the cursor
                if user_id in (page.get("members") or []):
                    return Membership(info.get("name"), bot_in=True, person_in=True)
        except (*FAILURES,) as error:
            raise ChatUnavailable(f"Slack would not say who is in that channel ({failure_code(error)}).") from None
        return Membership(info.get("name"), bot_in=True, person_in=False)

    def _info(self, channel: Channel) -> dict:
        """conversations.info's channel; one the bot can't see reads as empty (not a member, no name)."""
        try:
            return self.clients.for_team(channel.team_id).conversations_info(channel=channel.id)["channel"]
        except SlackApiError as error:
            if failure_code(error) in UNSEEN:
                return {}
            raise ChatUnavailable(f"Slack would not describe that channel ({failure_code(error)}).") from None
        except FAILURES as error:
            raise ChatUnavailable(f"Slack could not be reached ({failure_code(error)}).") from None
