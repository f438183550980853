"""Opening, merging and abandoning forks (invariants 5 and 7).

A merge is asked for with one conditional update (open → merging); the one winner's merge is then
taken and carried out (merging.py: `proceed`) at once, or — when Claude is answering in the fork — by
whoever records that answer, or by the sweep. The summary enters the parent in the same transaction
that marks the fork merged. Every other attempt gets a clear answer and changes nothing. With review
on, a merge drafts instead (reviews.py).
"""
from __future__ import annotations

import logging
from dataclasses import replace

from ..domain.agent import SessionStatus, session_title
from ..domain.commands import FORK_USAGE, HelpCommand, parse_fork
from ..domain.errors import ForkClosed, ForkNotFound, ReviewMoved, TooDeep
from ..domain.text import row_id
from ..domain.merge import EXPIRY_ACTOR, closed_reason, ensure_mergeable
from ..domain.model import Channel, ContextSize, Fork, ForkListing, ForkStatus, Mode, Session
from .access import SpendCaps
from .conversation import Conversation, Speaker
from .followups import safely
from .policy import Policies
from .ports import AgentSessions, ConnectorUse, ForkPosts, Merges, Sessions, Views
from .merging import Merging
from .reviews import Reviews

log = logging.getLogger(__name__)


class Forks:
    def __init__(self, posts: ForkPosts, conversation: Conversation, policies: Policies,
                 merging: Merging, reviews: Reviews, agent: AgentSessions | None = None,
                 caps: SpendCaps | None = None,
                 *, sessions: Sessions, merges: Merges, views: Views, connector_use: ConnectorUse):
        self.caps = caps  # a channel at its monthly spend cap opens no fork
        self.sessions, self.merges, self.views, self.connector_use = sessions, merges, views, connector_use
        self.posts = posts
        self.conversation = conversation
        self.policy = policies.base  # what no channel setting changes (depth)
        self.policies = policies
        self.merging = merging
        self.reviews = reviews
        self.agent = agent  # each fork's thread is an agent session (best effort)

    def open(self, channel: Channel, speaker: Speaker, text: str,
             origin_ts: str | None = None, parent: Fork | None = None) -> Fork | str:
        """Open a fork from `/fork` arguments (or from a message, `origin_ts`), of the channel's
        conversation or of the fork `parent`; returns the fork, or help text to show privately."""
        command = parse_fork(text)
        if isinstance(command, HelpCommand):
            return FORK_USAGE
        if parent is not None:
            self._may_nest(parent)
        cap = self.caps.check_opening(channel) if self.caps else None
        # leased to its opener, its topic stored, before its root is posted: a message written in its thread the
        # moment the root shows (before Slack's answer reaches us) waits for the root's ts, then queues behind the
        # topic, and the opener answers both in order
        with self.conversation.opener(speaker) as opener:
            fork = self.sessions.create_fork(channel, speaker.user_id, command.mode, command.topic,
                                             origin_ts=origin_ts, parent=parent,
                                             defaults=self.policies.defaults, opener=opener)
            if fork.fork_point_seq:
                size = self.views.context_size(fork.parent_id, fork.fork_point_seq)
                if parent is not None and parent.mode is Mode.INHERIT:  # and what the parent fork inherited
                    # (a reported context size already counts the parent's prefix; an estimate may not)
                    size = ContextSize(size.turns + parent.inherited.turns, max(size.tokens, parent.inherited.tokens))
                fork = replace(fork, inherited=size)
            try:
                self.sessions.set_root(fork.id, self.posts.post_fork_root(fork), fork.inherited)
            except Exception:
                self.merges.abandon(fork.id)  # a fork nobody can see must not stay open
                self.conversation.answer_held(fork.id, opener)  # closed: its topic fails, no model call, lease let go
                raise
            fork = self.sessions.fork(fork.id)
            if self.agent:
                self.agent.session_opened(fork, session_title(fork))
            if parent is not None:
                safely(self.posts.note_in_thread, parent,
                       f"<@{speaker.user_id}> opened fork #{fork.number} from this thread. Its summary comes "
                       "back here when it is merged.")
            used = self.conversation.answer_held(fork.id, opener)
        if cap is not None:
            self.caps.answered(channel, cap, used.cost_micros)
        return fork

    def resolve(self, channel: Channel, user_id: str, number: int | None) -> Fork:
        if number is not None:
            fork = self.sessions.fork_by_number(channel, number) if row_id(number) else None
            if fork is None:
                raise ForkNotFound(f"There is no fork #{number} in this channel.")
            return fork
        fork = self.sessions.latest_open_fork_of(channel, user_id)
        if fork is None:
            raise ForkNotFound("You have no open fork in this channel. Name one: `/merge N`.")
        return fork

    def _may_nest(self, parent: Fork) -> None:
        ensure_mergeable(parent)  # an open fork only
        if parent.depth >= self.policy.max_fork_depth:
            raise TooDeep(f"Fork {parent.label} is already {parent.depth} level{'s' if parent.depth > 1 else ''} "
                          f"deep, and forks nest at most {self.policy.max_fork_depth} deep here. Keep exploring "
                          "in this thread, or open a fork of the channel's conversation with `/fork`.")

    def merge(self, fork: Fork, user_id: str, guidance: str = "", idle_before=None) -> Fork:
        """Merge now, or with review on, draft the summary for people to approve (reviews.py): then
        nothing enters the parent until a person does, not even when the fork expires (its expiry
        drafts, once; the draft waits). A merge asked for while Claude is answering in the fork waits for
        that answer to be recorded (its root says so) and is carried out by whoever records it, or by the
        sweep (`resume`): the fork is returned still merging then."""
        policy = self.policies.of(fork.channel)
        policy.check(fork, user_id, "merge")
        ensure_mergeable(fork)
        self.merging.no_open_children(fork, "merge")
        if policy.reviewed(fork):
            if user_id == EXPIRY_ACTOR and self.reviews.drafted(fork):
                return fork  # its draft waits for a person, or a person cancelled it: once per idle stretch
            return self.reviews.draft(fork, user_id, guidance)
        self.merging.has_turns(fork)
        if not self.merges.request_merge(fork.id, user_id, guidance, idle_before):
            now = self.sessions.fork(fork.id)
            if now.status is ForkStatus.OPEN and now.last_activity_at == fork.last_activity_at:
                raise ReviewMoved(f"A summary of fork {fork.label} is being written right now.")
            raise ForkClosed(closed_reason(now))
        self.reviews.close(fork.draft, self.sessions.fork(fork.id),
                           "Not used: the fork sat idle past its expiry and was merged." if user_id == EXPIRY_ACTOR
                           else f"Not used: <@{user_id}> merged the fork directly.")
        return self.merging.proceed(fork.id) or self.merging.waiting(fork.id)

    def abandon(self, fork: Fork, user_id: str, idle_before=None) -> Fork:
        self.policies.of(fork.channel).check(fork, user_id, "abandon")
        if fork.status is ForkStatus.OPEN:
            self.merging.no_open_children(fork, "abandon")
        if fork.status is not ForkStatus.OPEN or not self.merges.abandon(fork.id, idle_before):
            raise ForkClosed(closed_reason(self.sessions.fork(fork.id)))
        abandoned = self.sessions.fork(fork.id)
        who = "It was closed after sitting idle" if user_id == EXPIRY_ACTOR else f"<@{user_id}> abandoned this fork"
        safely(self.posts.note_in_thread, abandoned,
                     f"{who}. Nothing was added to the channel's conversation.")
        safely(self.posts.refresh_fork_root, abandoned)
        self.reviews.close(fork.draft, abandoned, "Not merged: the fork was abandoned.")
        if self.agent:
            self.agent.session_status(abandoned, SessionStatus.CLOSED)
        return abandoned

    def listings(self, forks: list[Fork]) -> list[ForkListing]:
        """Each fork with its stats, its MCP tool calls per connector among them."""
        calls: dict = {}
        for channel in {f.channel for f in forks}:
            calls[channel] = self.connector_use.in_channel(channel)
        return [ForkListing(f, replace(self.views.stats(f.id), connector_calls=tuple(
            calls[f.channel].get(f.number, {}).items()))) for f in forks]
