"""Who may use Threadfork where, and who may change a channel's settings.

Use: THREADFORK_ALLOWED_CHANNELS and THREADFORK_ALLOWED_USERS (empty = everyone, everywhere), and
each channel's own on/off switch. Outside them the bot answers privately, once per message, and calls
no model. Settings: workspace admins and owners (as users.info says, asked once an hour per person with
their name: a role changed in Slack counts within the hour), and the users in THREADFORK_ADMINS.
"""
from __future__ import annotations

from dataclasses import dataclass

from ..domain.model import Channel
from ..domain.settings import ChannelSettings
from .ports import Audience, ChannelSettingsStore, People, PrivateAnswers

NOT_LISTED = ("Threadfork isn't enabled {where} — ask your workspace admin to add {what} to "
              "THREADFORK_ALLOWED_{list}.")
TURNED_OFF = "Threadfork is turned off in this channel. A workspace admin can turn it on with `/threadfork`."
NOT_ADMIN = "Only workspace admins and owners (and the people in THREADFORK_ADMINS) can {verb}."


@dataclass(frozen=True)
class AccessLists:
    channels: frozenset[str] = frozenset()  # empty: every channel
    users: frozenset[str] = frozenset()  # empty: everyone
    admins: frozenset[str] = frozenset()  # beside the workspace's own admins and owners


class Access:
    def __init__(self, answers: PrivateAnswers, people: People, lists: AccessLists = AccessLists(),
                 *, channel_settings: ChannelSettingsStore):
        self.channel_settings = channel_settings
        self.answers = answers
        self.people = people
        self.lists = lists

    def refusal(self, channel: Channel, user_id: str, chosen: ChannelSettings | None = None) -> str | None:
        """Why Threadfork won't act for this person here (None: it will). `chosen`: the channel's settings,
        when the caller has read them already (a turn reads them once)."""
        if not self._listed(channel):
            where = "in direct messages here" if channel.id.startswith("D") else "in this channel"
            return NOT_LISTED.format(where=where, what="this conversation", list="CHANNELS")
        if self.lists.users and user_id not in self.lists.users:
            return NOT_LISTED.format(where="for you", what="you", list="USERS")
        if self._switched_off(channel, chosen):
            return TURNED_OFF
        return None

    def refusal_at_once(self, channel: Channel, user_id: str) -> str | None:
        """`refusal`, for an answer given in the acknowledgement itself: the channel's settings read for an
        acknowledgement (ChannelSettingsStore.of_at_the_door)."""
        return self.refusal(channel, user_id, self.channel_settings.of_at_the_door(channel))

    def closed(self, channel: Channel) -> bool:
        """Off here for everyone: the sweep leaves its forks alone (no reminder, no expiry, no model call)."""
        return not self._listed(channel) or self._switched_off(channel)

    def _listed(self, channel: Channel) -> bool:
        return not self.lists.channels or channel.id in self.lists.channels

    def _switched_off(self, channel: Channel, chosen: ChannelSettings | None = None) -> bool:
        return (self.channel_settings.of(channel) if chosen is None else chosen).enabled is False

    def admits(self, audience: Audience) -> bool:
        """For an act that is always meant for Threadfork (a command, a button, a shortcut, a ✅): False,
        after telling the person privately, when it may not act here."""
        refusal = self.refusal(audience.channel, audience.user_id)
        if refusal:
            self.answers.tell(audience, refusal)
        return refusal is None

    def is_admin(self, team_id: str, user_id: str) -> bool:
        return user_id in self.lists.admins or self.people.is_admin(team_id, user_id)
