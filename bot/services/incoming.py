"""What comes in: a delivery kept before its acknowledgement (`Intake`), then a person's message routed to where
it goes (`Router`).

Acknowledged means kept: a delivery worth keeping (a person's message, a command, a ✅, a button,
a shortcut) is recorded in the durable inbox before Slack gets its acknowledgement, processed, then
marked done. A redelivery of something kept is turned away at the door (Slack's retries, a replayed
request); one whose process died is replayed by the sweep once its claim expires; one that failed
MAX_ATTEMPTS times ends with a notice to its sender. What cannot be recorded at all is not
acknowledged, so Slack delivers it again (the Slack adapter decides how each kind is refused).

Where a person's message goes: a fork's thread turn, a parent turn (a mention, or any DM), an
in-thread command (`@Threadfork merge|abandon`), a thread adopted as a fork (a mention in a channel
thread that is none: adoption.py), or a short private answer.

`message` and `app_mention` deliver a mention under two event ids: each message is claimed once by
its channel + ts, atomically with storing its turn (or before any other action), so it is acted on
once whatever arrives twice. Channel chatter that mentions nobody costs no write.

In a DM, a message at the top level written beside a channel (the agent pane, pane.py) opens a private
fork of that channel in the thread under it, and is its first turn; without a channel in view, or when
the person may not fork it, it is a DM turn as always.

A message someone shared or forwarded (`shared`) is part of the sharer's turn, quoted after their own
words (bot/domain/text.py), with or without words of their own; whether the bot was mentioned, and
which command was given, is read from the sharer's own words only.

A message in a thread that is no fork while a fork of the channel is being opened waits for that opening to be
recorded (Slack shows the root before the bot has its ts): it may be the fork's first turn, never dropped, and
it follows the fork's topic (opening.py).

A turn reads its channel's settings once, and with them its spend this month where a cap applies
(access.py): at the cap a new turn or fork is refused privately, with no model call; merges, abandons and
other in-thread commands go on.
"""
from __future__ import annotations

import logging
from collections.abc import Sequence
from dataclasses import dataclass, replace
from datetime import timedelta
from typing import Protocol

from ..domain.commands import ForkCommand, mentions, parse_fork, parse_thread_command, strip_mention
from ..domain.errors import ThreadforkError
from ..domain.model import Channel, Fork, ForkStatus, Role, Session, TurnStatus
from ..domain.queue import one_too_many
from ..domain.settings import ChannelSettings
from ..domain.text import SharedMessage, with_shared
from ..infrastructure import metrics
from .access import Access, CapView, SpendCaps
from .adoption import Adoption
from .attachments import Attachments
from .budgets import Budgets
from .conversation import Conversation, Speaker
from .forks import Forks
from .liveness import Liveness
from .opening import OPENER_LIMIT, once_opened
from .pane import AgentPane
from .policy import not_theirs
from .ports import (MAX_ATTEMPTS, Audience, BotUsers, Claims, Clock, Inbox, People, PrivateAnswers, Sessions,
                    SharedFile, Spending, Standing, TurnQueue)
from .refusals import refuse
from .remembering import Remembering

NOT_A_FORK = ("This thread isn't a fork, so there is nothing to {verb}. Mention me here with a question and "
              "it becomes one.")
SUMMONED = "[mentioned Threadfork here without a message]"  # an empty mention that adopts a thread
EMPTY_MENTION = "I got an empty message — write your question after the mention."
EMPTY_MESSAGE = "I got an empty message — write your question and send it again."  # in a DM: no mention there


@dataclass(frozen=True)
class IncomingMessage:
    team_id: str
    channel_id: str
    channel_type: str | None
    user_id: str
    text: str
    ts: str
    thread_ts: str | None = None
    files: Sequence[SharedFile] = ()  # may be read lazily (Slack Connect stubs are resolved on first read)
    shared: tuple[SharedMessage, ...] = ()  # messages shared or forwarded with this one
    delivery: str | None = None  # the kept delivery it arrived in (done once its turn is stored)
    standing: Standing | None = None  # what its turn reads of the channel, as its delivery's keep read it
    # in a DM: the channels Slack says its writer views (its app_context; None: it attached no context)
    viewing: tuple[str, ...] | None = None

    @property
    def channel(self) -> Channel:
        return Channel(self.team_id, self.channel_id)

    @property
    def in_thread(self) -> bool:
        return bool(self.thread_ts) and self.thread_ts != self.ts


class Router:
    def __init__(self, answers: PrivateAnswers, people: People, conversation: Conversation, forks: Forks,
                 budgets: Budgets, attachments: Attachments, adoption: Adoption, bot_user_id: BotUsers, access: Access,
                 caps: SpendCaps, pane: AgentPane | None = None, remembering: Remembering | None = None,
                 *, claims: Claims, sessions: Sessions, turns: TurnQueue, spending: Spending):
        self.access = access
        self.remembering = remembering
        self.caps = caps
        self.pane = pane
        self.attachments = attachments
        self.adoption = adoption
        self.claims, self.sessions, self.turns, self.spending = claims, sessions, turns, spending
        self.answers = answers
        self.people = people
        self.conversation = conversation
        self.forks = forks
        self.budgets = budgets
        self.bot_user_id = bot_user_id

    def receive(self, message: IncomingMessage) -> None:
        bot = self.bot_user_id(message.team_id)
        mentioned = mentions(message.text, bot)
        standing = message.standing
        if message.in_thread:  # its fork and what its turn reads of the channel, in one read
            standing = self._once_opened(message, self.spending.chosen(message.channel, message.thread_ts))
        fork = standing.fork if message.in_thread else None
        if fork is None and not (mentioned or message.channel_type == "im"):
            return  # ordinary channel chatter; the parent listens only when mentioned
        key = f"msg:{message.team_id}:{message.channel_id}:{message.ts}"
        text = with_shared(strip_mention(message.text, bot), message.shared)
        audience = Audience(message.team_id, message.channel_id, message.user_id,
                            thread_ts=message.thread_ts if message.in_thread else None)
        foreign_thread = message.in_thread and message.channel_type != "im"
        chosen, cap, parent = self.caps.read(message.channel, standing)  # once for the whole turn
        refusal = self.access.refusal(message.channel, message.user_id, chosen)
        if refusal:  # once, though a mention arrives twice (as `message` and `app_mention`); no model call
            if self.claims.claim(key):
                self.answers.tell(audience, refusal)
            return
        capped = self.caps.refusal(message.channel, cap)
        try:
            if fork is not None:
                self._in_fork(fork, message, text, mentioned, audience, key, chosen, cap, capped)
            elif self._remembered(message, text, mentioned, audience, key):
                return
            elif foreign_thread:
                self._adopt(message, text, audience, key, capped)
            elif text or message.files:
                if capped or not self._privately(message, text, key, chosen, cap):
                    self._parent_turn(message, text, audience, key, chosen, cap, capped, parent)
            elif self.claims.claim(key):
                self.answers.tell(audience, EMPTY_MESSAGE if message.channel_type == "im" else EMPTY_MENTION)
        except ThreadforkError as error:
            refuse(self.answers, audience, error)

    def _remembered(self, message: IncomingMessage, text: str, mentioned: bool, audience: Audience, key: str,
                    fork: Fork | None = None) -> bool:
        """`remember <text>` (mentioned, or in a DM): the channel's (the fork's) memory, no model call; True when
        it was one. In a thread that is no fork, it is the channel's memory (the thread is not adopted)."""
        if self.remembering is None or message.shared or not (mentioned or message.channel_type == "im"):
            return False
        command = parse_thread_command(text)
        if command is None or command.verb != "remember":
            return False
        if self.claims.claim(key):
            self.remembering.remember(message.channel, message.user_id, command.guidance,
                                      replace(audience, thread_ts=None) if fork is None else audience, fork)
        return True

    def _once_opened(self, message: IncomingMessage, standing: Standing) -> Standing:
        """A thread's message that names no fork while a fork of its channel is being opened: Slack shows a root
        before its poster has Slack's answer, so it may be that fork's first message. It waits while the opening is
        under way (its opener alive: opening.py), then is that fork's turn, queued behind its topic."""
        return once_opened(standing, lambda s: s.fork is not None or not s.opening,
                           lambda: self.spending.chosen(message.channel, message.thread_ts), OPENER_LIMIT)

    def _parent_turn(self, message: IncomingMessage, text: str, audience: Audience, key: str,
                     chosen: ChannelSettings, cap: CapView | None, capped: str | None, parent: int | None) -> None:
        """`parent`: the channel's session as the turn's read found it (None: it has none yet, made here)."""
        parent = parent if parent is not None else self.sessions.parent_id(message.channel)
        session = Session(parent, message.channel_id, message.team_id)
        if capped:
            self._keep_unanswered(session, message, text, audience, key, capped)
        else:
            self._submit(session, message, text, audience, key, chosen, cap)

    def _privately(self, message: IncomingMessage, text: str, key: str, chosen: ChannelSettings,
                   cap: CapView | None) -> bool:
        """A DM message beside a channel: the first turn of a private fork of it (True), if it may be one."""
        if self.pane is None or message.channel_type != "im" or message.in_thread:
            return False
        home = self.pane.in_view(message.team_id, message.user_id, message.viewing)
        if home:  # a private fork of a channel at its cap is a new fork of it: refused as one (CapReached)
            self.caps.check_opening(Channel(message.team_id, home), elsewhere=True)
        fork = self.pane.open_private(home, message.channel, message.ts, message.user_id, text) if home else None
        if fork is None:
            return False
        audience = Audience(message.team_id, message.channel_id, message.user_id, thread_ts=message.ts)
        self._submit(Session(fork.id, fork.channel_id, fork.team_id, fork), message, text, audience, key, chosen, cap)
        return True

    def _adopt(self, message: IncomingMessage, text: str, audience: Audience, key: str,
               capped: str | None = None) -> None:
        """A mention in a thread that is no fork: the thread becomes one, then the mention is its turn."""
        command = None if message.shared else parse_thread_command(text)
        if command and command.verb != "fork":
            self._tell_once(key, audience, NOT_A_FORK.format(verb=command.verb))
            return
        if capped:  # it would be a new fork
            self._tell_once(key, audience, capped)
            return
        if command:  # `@Threadfork fork [topic]` here: this very thread becomes the fork (an inherited one)
            asked = parse_fork(command.guidance)
            text = asked.topic if isinstance(asked, ForkCommand) else ""
        adopted = self.adoption.adopt(message.channel, message.thread_ts, message.user_id, message.ts)
        words = text or ("" if message.files else SUMMONED)
        self._in_fork(adopted.fork, message, words, True, audience, key)
        if adopted.new:  # what arrived while it was being adopted waited for it: answer it now
            self.conversation.drain(adopted.fork.id)

    def _in_fork(self, fork: Fork, message: IncomingMessage, text: str, mentioned: bool, audience: Audience,
                 key: str, chosen: ChannelSettings | None = None, cap: CapView | None = None,
                 capped: str | None = None) -> None:
        if fork.private and message.user_id != fork.owner_id:  # its thread is in the owner's DM: nobody else's
            if self.claims.claim(key):
                self.answers.tell(audience, not_theirs(fork, "talk in it"))
            return
        if self._remembered(message, text, mentioned, audience, key, fork):
            return
        command = parse_thread_command(text) if mentioned and not message.shared else None
        words = text or message.files
        if not command and fork.status is ForkStatus.OPEN and words and not self.budgets.exhausted(fork, chosen):
            session = Session(fork.id, fork.channel_id, fork.team_id, fork)
            if capped:
                self._keep_unanswered(session, message, text, audience, key, capped)
            else:
                self._submit(session, message, text, audience, key, chosen, cap)
            return
        if not self.claims.claim(key):
            return
        if command and command.verb == "merge":
            metrics.merge("mention", self.forks.merge, fork, message.user_id, command.guidance)
        elif command and command.verb == "fork":
            opened = self.forks.open(fork.channel, self._speaker(fork.team_id, message.user_id), command.guidance,
                                     parent=fork)
            if isinstance(opened, str):
                self.answers.tell(audience, opened)
        elif command:
            self.forks.abandon(fork, message.user_id)
        elif fork.status is not ForkStatus.OPEN:
            state = "merged" if fork.status in (ForkStatus.MERGED, ForkStatus.MERGING) else "abandoned"
            self.answers.tell(audience, f"Fork {fork.label} is {state}, so I won't answer here. "
                                        "Open a new one with `/fork [topic]` at the channel's top level.")
        elif words:
            _, notice = self._keep(Session(fork.id, fork.channel_id, fork.team_id, fork), message, text)
            self.answers.tell(audience, f"Fork {fork.label} has used up its token budget, so I kept your message "
                                        "without answering. Merge it, abandon it, or press *Continue* on the budget "
                                        "notice in this thread to raise the budget." + (f" {notice}" if notice else ""))
        else:
            self.answers.tell(audience, "That message had no text, so I left it out of the fork.")

    def _tell_once(self, key: str, audience: Audience, text: str) -> None:
        """A private answer to a message, once though it arrives twice."""
        if self.claims.claim(key):
            self.answers.tell(audience, text)

    def _keep_unanswered(self, session: Session, message: IncomingMessage, text: str, audience: Audience, key: str,
                         why: str) -> None:
        """At the spend cap: the message is kept in the session as a failed turn (🔁 answers it once the cap
        is raised), no model is called, and its author is told why, privately, once."""
        if not self.claims.claim(key):
            return
        kept, notice = self._keep(session, message, text)
        self.answers.tell(audience, why + (" Your message is kept: react 🔁 to it once the cap is raised." if kept
                                           else "") + (f" {notice}" if notice else ""))

    def _keep(self, session: Session, message: IncomingMessage, text: str) -> tuple[bool, str | None]:
        """The message stored unanswered, as a failed turn with the files Claude could read (🔁 answers it
        later): whether anything was kept, and the notice naming files left out, if any."""
        attachments, notice = self.attachments.prepare(message.files) if message.files else ([], None)
        if not (text or attachments):
            return False, notice
        self.turns.append_turn(session.id, Role.USER, text, TurnStatus.FAILED, author_id=message.user_id,
                                     author_name=self.people.display_name(message.team_id, message.user_id),
                                     slack_ts=message.ts, channel=session.channel if session.fork else None,
                                     attachments=attachments)
        return True, notice

    def _submit(self, session: Session, message: IncomingMessage, text: str, audience: Audience, key: str,
                chosen: ChannelSettings | None = None, cap: CapView | None = None) -> None:
        """A turn, with the files shared with it; files left out are named to their sender, once; then the
        channel's spend notice if its answers took it near its cap."""
        attachments, notice = self.attachments.prepare(message.files) if message.files else ([], None)
        if message.files and not attachments and not text:
            if self.claims.claim(key):
                self.answers.tell(audience, notice)
            return
        under_review = session.fork if session.fork and session.fork.draft else None

        def stored() -> None:
            if notice:
                self.answers.tell(audience, notice)
            if under_review:
                self.forks.reviews.went_on(under_review)

        used = self.conversation.submit(session, self._speaker(message.team_id, message.user_id), text, message.ts,
                                        claim=key, attachments=attachments, on_stored=stored, chosen=chosen,
                                        delivery=message.delivery)
        if cap is not None:
            self.caps.answered(session.channel, cap, used.cost_micros)

    def _speaker(self, team_id: str, user_id: str) -> Speaker:
        return Speaker(user_id, self.people.display_name(team_id, user_id))


log = logging.getLogger(__name__)

KEPT_FOR = timedelta(days=1)  # how long done deliveries and claims turn redeliveries away


class Deliveries(Protocol):
    """The Slack side of replaying a kept delivery."""

    def replay(self, key: str, payload: str) -> None:
        """Process it again, as when Slack first delivered it (marking it done when finished)."""

    def give_up(self, payload: str) -> None:
        """Tell its sender, privately and in one sentence, that it could not be processed."""


class Intake:
    def __init__(self, liveness: Liveness, deliveries: Deliveries | None = None,
                 *, claims: Claims, inbox: Inbox, clock: Clock):
        self.claims, self.inbox, self.clock = claims, inbox, clock
        self.liveness = liveness
        self.deliveries = deliveries  # None without Slack (unit tests, the eval): nothing to replay

    def first_delivery(self, event_id: str) -> bool:
        """True once per Slack event id, whichever replica sees it first."""
        return self.claims.claim(f"event:{event_id}")

    def keep(self, key: str, payload: str) -> bool:
        """Record a delivery before it is acknowledged; False: it was kept before (a redelivery).
        Raises when the store cannot record it."""
        kept = self.inbox.keep(key, payload, self.liveness.ttl)
        if kept:
            metrics.DELIVERIES.labels("kept").inc()
            self.liveness.hold("delivery", key)
        return kept

    def keep_turn(self, key: str, payload: str, channel: Channel) -> Standing | None:
        """`keep` for a message that may be a turn in `channel`, reading in the same write what its turn reads of
        the channel (its settings, month, session: a read transaction fewer per turn); None: kept before."""
        standing = self.inbox.keep_and_read(key, payload, self.liveness.ttl, channel)
        if standing is not None:
            metrics.DELIVERIES.labels("kept").inc()
            self.liveness.hold("delivery", key)
        return standing

    def done(self, key: str) -> None:
        """Processed. A delivery this process no longer holds was finished already (its turn stored it
        done: Conversation.submit), so nothing is written again."""
        if self.liveness.holds("delivery", key):
            self.liveness.let_go("delivery", key)
            self.inbox.done(key)
            metrics.DELIVERIES.labels("done").inc()

    def replay_due(self) -> None:
        """Sweep step: deliveries whose process died before finishing them."""
        if self.deliveries is None:
            return
        for key in self.inbox.due():
            kept = self.inbox.take(key, self.liveness.ttl)
            if kept is None:
                continue  # another sweeper took it
            metrics.TAKEOVERS.labels("delivery").inc()
            self.liveness.hold("delivery", key)  # until the replay is done (Deliveries.replay marks it)
            try:
                if one_too_many(kept.attempts):
                    log.warning("delivery %s failed %s times; giving up", key, MAX_ATTEMPTS)
                    self.deliveries.give_up(kept.payload)
                    self.done(key)
                else:
                    log.info("replaying delivery %s (attempt %s)", key, kept.attempts)
                    self.deliveries.replay(key, kept.payload)
            except Exception:
                log.exception("replaying delivery %s failed; it will be tried again", key)
                self.failed(key)

    def failed(self, key: str) -> None:
        """Processing raised: stop renewing its claim, so a sweep replays it once the claim expires."""
        self.liveness.let_go("delivery", key)

    def prune(self) -> None:
        """Sweep step: forget claims and finished deliveries older than a day."""
        before = self.clock() - KEPT_FOR
        self.claims.prune(before)
        self.inbox.prune(before)
