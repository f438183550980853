"""Who may ask Threadfork, where, before any model call: the access lists and each channel's switch (who may
use it, and who may change a channel's settings), and the channel's monthly cap on estimated spend.

## Access

Use: THREADFORK_ALLOWED_CHANNELS and THREADFORK_ALLOWED_USERS (empty = everyone, everywhere), and
each channel's own on/off switch. Outside them the bot answers privately, once per message, and calls
no model. Settings: workspace admins and owners (as users.info says, asked once an hour per person with
their name: a role changed in Slack counts within the hour), and the users in THREADFORK_ADMINS.

## The monthly spend cap

The cap on estimated spend (bot/domain/spend.py) is in `/threadfork` settings, with
THREADFORK_MONTHLY_SPEND_CAP_USD as every channel's default.

- A turn's one read of its channel (`read`: its settings, the month's spend and its session, in one
  statement, usually inside its delivery's keep) brings the cap's figures with it: the cap costs a turn
  no read of its own; the month counts only where a cap applies.
- At the cap, a new turn or fork gets a private answer (`refusal`) and no model call; merges and
  abandons go on, so no fork is stranded. The cap and the month are read afresh at every turn, so a
  raised cap or a new month lifts it at once on every replica.
- Under concurrency it holds by reservation (`admit`, before every model call of a turn): the turn sets its
  worst case aside on the channel's day, atomically across replicas, only while the month's spend plus what is
  set aside is under the cap, and its answer's record settles it (a failure releases it, and so does the sweep
  that interrupts a reply whose process died: the reservation is kept on the reply's row). A turn that would pass
  the cap with the answers being written now is refused like one at the cap (kept, its author told privately);
  so is a new message while they are, as the turn's read counts what they set aside. A private fork counts
  against the channel it forks.
- At NOTICE_SHARE of the cap the channel gets one notice per month and cap, whichever replica sees it
  first (a marker): after the answer that crossed it, or at the next turn when a merge or compaction did.
  Each process remembers the notices it knows were sent, so a channel near its cap costs no write per turn.
"""
from __future__ import annotations

import logging
from dataclasses import dataclass
from typing import NamedTuple

from ..domain.agent import is_dm
from ..domain.errors import CapReached
from ..domain.model import Channel, Session, Usage
from ..domain.settings import ChannelSettings
from ..domain.spend import ESTIMATED, CapState, Reservation, cap_micros, cap_state, dollars, month_of, priced
from .ports import (Audience, ChannelSettingsStore, Claims, Clock, People, Place, PrivateAnswers, Replies, Spending,
                    Standing)

log = logging.getLogger(__name__)

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


ADMIT_TRIES = 3  # reservations a turn tries while the answers that refused it settle meanwhile
REMEMBERED = 10_000  # notices a process remembers as sent; beyond that it asks the store again


@dataclass(frozen=True)
class CapView:
    """A channel's cap in force and its spend this month, as a turn read them."""

    cap_usd: float | None  # None or 0: no cap applies
    month_micros: int | None  # None: not read (no cap applies)
    reserved_micros: int = 0  # set aside today by the answers being written now

    @property
    def state(self) -> CapState:
        return cap_state(self.month_micros, self.cap_usd)

    @property
    def admits(self) -> bool:
        """A new turn may start: no cap applies, or the month's spend and what is set aside are under it."""
        return self.month_micros is None or cap_state(self.month_micros + self.reserved_micros,
                                                      self.cap_usd) is not CapState.REACHED

    def plus(self, micros: int) -> CapView:
        return CapView(self.cap_usd, None if self.month_micros is None else self.month_micros + micros)


class ChannelRead(NamedTuple):
    settings: ChannelSettings
    cap: CapView
    parent_id: int | None  # the channel's conversation session (None: it has none yet)


class SpendCaps:
    def __init__(self, replies: Replies, default_cap: float | None, admins: frozenset[str] = frozenset(),
                 *, claims: Claims, channel_settings: ChannelSettingsStore, spending: Spending, clock: Clock):
        self.claims, self.channel_settings, self.spending, self.clock = claims, channel_settings, spending, clock
        self.replies = replies
        self.default_cap = default_cap or None  # THREADFORK_MONTHLY_SPEND_CAP_USD; 0 or unset: none
        self.admins = admins  # THREADFORK_ADMINS, who may raise it beside the workspace's admins and owners
        self._noticed: set[str] = set()

    def read(self, channel: Channel, standing: Standing | None = None) -> ChannelRead:
        """The channel's settings, its cap in force and its conversation's session, in the one read a turn
        makes of them (`standing`: as its delivery's keep read them, if it did)."""
        standing = standing or self.spending.chosen(channel)
        chosen = standing.settings
        cap = chosen.monthly_spend_cap_usd if chosen.monthly_spend_cap_usd is not None else self.default_cap
        return ChannelRead(chosen, CapView(cap, standing.month_micros if cap else None, standing.reserved_micros),
                           standing.parent_id)

    def refusal(self, channel: Channel, view: CapView, elsewhere: bool = False) -> str | None:
        """What a person who asks for a new turn or fork is told privately at the cap (None: below it); the
        channel is told once, too, if nobody was yet. `elsewhere`: asked from another conversation (a private
        fork of the channel, from a DM), which the answer names."""
        self.notice_if_due(channel, view)
        if view.admits:
            return None
        where = f"<#{channel.id}>" if elsewhere else "This DM" if is_dm(channel.id) else "This channel"
        if view.state is not CapState.REACHED:  # only with what the answers being written now may cost
            return (f"{where} reached its monthly spend cap, counting what the answers being written now may cost: "
                    f"{dollars(view.month_micros)} spent of {dollars(cap_micros(view.cap_usd))} this month "
                    f"({ESTIMATED}). I won't start new questions or forks {'of it' if elsewhere else 'here'} until "
                    f"they are done (then try again), or {self.who_can_raise()} raises the cap with `/threadfork`. "
                    "Merging and abandoning forks still work.")
        return (f"{where} reached its monthly spend cap: {dollars(view.month_micros)} of "
                f"{dollars(cap_micros(view.cap_usd))} this month ({ESTIMATED}). I won't start new questions or "
                f"forks {'of it' if elsewhere else 'here'} until {self.who_can_raise()} raises the cap with `/threadfork`, or the month ends "
                f"({self._month()[1]} UTC). Merging and abandoning forks still work.")

    def check_opening(self, channel: Channel, elsewhere: bool = False) -> CapView:
        """The channel's cap in force; raises CapReached, with what to tell the person, when it is reached
        (`elsewhere`: see refusal)."""
        view = self.read(channel)[1]
        refused = self.refusal(channel, view, elsewhere)
        if refused:
            raise CapReached(refused)
        return view

    def admit(self, session: Session, chosen: ChannelSettings | None, ceiling: tuple[str, Usage],
              reply_id: int | None = None) -> Reservation | None:
        """Before a model call of `session`'s turn: its worst case (`ceiling`: the model and the most it may use)
        set aside against the cap of its channel (a private fork's: the channel it forks; `chosen`: the session's
        channel's settings, if just read), kept with its reply `reply_id`. None: no cap applies. Raises CapReached, with what to tell its
        authors, when the cap, with what is set aside already, is reached."""
        channel = session.fork.home if session.fork else session.channel
        settings = chosen if chosen is not None and channel == session.channel else None
        settings = settings or self.channel_settings.of(channel)
        cap = settings.monthly_spend_cap_usd if settings.monthly_spend_cap_usd is not None else self.default_cap
        if not cap:
            return None
        model, most = ceiling
        worst, elsewhere = priced(model, most).cost_micros, channel != session.channel
        for _ in range(ADMIT_TRIES):  # refused, but what was set aside may have been settled since
            reservation = self.spending.reserve(channel, worst, cap_micros(cap), reply_id)
            if reservation is not None:
                return reservation
            view = self.read(channel)[1]
            if not view.admits:
                break
        busy = CapView(cap, view.month_micros or 0, view.reserved_micros + cap_micros(cap))  # as the store found it
        raise CapReached(self.refusal(channel, view if not view.admits else busy, elsewhere))

    def answered(self, channel: Channel, view: CapView, micros: int) -> None:
        """After answers that cost `micros`: the channel's notice, if they took it to NOTICE_SHARE of its cap."""
        if micros and view.month_micros is not None:
            self.notice_if_due(channel, view.plus(micros))

    def notice_if_due(self, channel: Channel, view: CapView) -> None:
        if view.state not in (CapState.NEAR, CapState.REACHED):
            return
        key = f"spend-notice:{channel.team_id}:{channel.id}:{self._month()[0]}:{cap_micros(view.cap_usd)}"
        if key in self._noticed:
            return
        if len(self._noticed) >= REMEMBERED:
            self._noticed.clear()
        self._noticed.add(key)
        if not self.claims.mark(key):
            return
        cap = dollars(cap_micros(view.cap_usd))
        if view.state is CapState.REACHED:
            text = (f"💸 This channel reached its monthly spend cap of {cap} ({dollars(view.month_micros)} this month, "
                    f"{ESTIMATED}). New questions and forks wait until {self.who_can_raise()} raises it with "
                    f"`/threadfork`, or the month ends; merging and abandoning forks still work.")
        else:
            share = view.month_micros / cap_micros(view.cap_usd)
            text = (f"💸 This channel has used {share:.0%} of its monthly spend cap: {dollars(view.month_micros)} of "
                    f"{cap} this month ({ESTIMATED}). At the cap, new questions and forks wait until "
                    f"{self.who_can_raise()} raises it with `/threadfork`.")
        try:
            self.replies.post_notice(Place(channel.id, None, channel.team_id, None), text)
        except Exception:
            log.exception("the spend notice of channel %s could not be posted", channel.id)

    def who_can_raise(self) -> str:
        listed = sorted(self.admins)[:5]
        named = ", ".join(f"<@{user}>" for user in listed)
        return "a workspace admin or owner" + (f" (or {named})" if named else "")

    def _month(self) -> tuple[str, str]:
        """This UTC month's first day and the next one's, by the store's clock (the one its figures use)."""
        return month_of(self.clock())
