"""Opening, merging and abandoning forks (invariants 5 and 7).

A merge claims the fork with one conditional update (open → merging); only the winner asks
Claude for the summary (merging.py), and the summary enters the parent in the same transaction that
marks the fork merged. Every other attempt gets a clear answer and changes nothing. With review on,
a merge drafts instead (reviews.py).
"""
from __future__ import annotations

import logging
from dataclasses import replace

from ..domain.agent import SessionStatus, session_title
from ..domain.commands import FORK_USAGE, HelpCommand, parse_fork
from ..domain.errors import ForkClosed, ForkNotFound, ReviewMoved, TooDeep
from ..domain.merge import EXPIRY_ACTOR, closed_reason, ensure_mergeable
from ..domain.model import Channel, ContextSize, Fork, ForkListing, ForkStatus, Mode, Session
from ..domain.queue import one_too_many
from ..infrastructure import metrics
from .caps import SpendCaps
from .conversation import Conversation, Speaker
from .followups import safely
from .liveness import Liveness
from .policy import Policies
from .ports import MAX_ATTEMPTS, AgentSessions, ForkPosts, Store
from .merging import Merging
from .reviews import Reviews

log = logging.getLogger(__name__)


class Forks:
    def __init__(self, store: Store, posts: ForkPosts, conversation: Conversation, policies: Policies,
                 liveness: Liveness, merging: Merging, reviews: Reviews, agent: AgentSessions | None = None,
                 caps: SpendCaps | None = None):
        self.liveness = liveness
        self.caps = caps  # a channel at its monthly spend cap opens no fork
        self.store = store
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
        fork = self.store.sessions.create_fork(channel, speaker.user_id, command.mode, command.topic,
                                               origin_ts=origin_ts, parent=parent, defaults=self.policies.defaults)
        if fork.fork_point_seq:
            size = self.store.views.context_size(fork.parent_id, fork.fork_point_seq)
            if parent is not None and parent.mode is Mode.INHERIT:  # and what the parent fork inherited
                # (a reported context size already counts the parent's prefix; an estimate may not)
                size = ContextSize(size.turns + parent.inherited.turns, max(size.tokens, parent.inherited.tokens))
            fork = replace(fork, inherited=size)
        try:
            root_ts = self.posts.post_fork_root(fork)
        except Exception:
            self.store.merges.abandon(fork.id)  # a fork nobody can see must not stay open
            raise
        self.store.sessions.set_root(fork.id, root_ts, fork.inherited)
        fork = self.store.sessions.fork(fork.id)
        if self.agent:
            self.agent.session_opened(fork, session_title(fork))
        if parent is not None:
            safely(self.posts.note_in_thread, parent,
                         f"<@{speaker.user_id}> opened fork #{fork.number} from this thread. Its summary comes "
                         "back here when it is merged.")
        if command.topic:
            used = self.conversation.submit(Session(fork.id, fork.channel_id, fork.team_id, fork), speaker,
                                            command.topic, None)
            if cap is not None:
                self.caps.answered(channel, cap, used.cost_micros)
        return fork

    def resolve(self, channel: Channel, user_id: str, number: int | None) -> Fork:
        if number is not None:
            fork = self.store.sessions.fork_by_number(channel, number)
            if fork is None:
                raise ForkNotFound(f"There is no fork #{number} in this channel.")
            return fork
        fork = self.store.sessions.latest_open_fork_of(channel, user_id)
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
        drafts, once; the draft waits)."""
        policy = self.policies.of(fork.channel)
        policy.check(fork, user_id, "merge")
        ensure_mergeable(fork)
        self.merging.no_open_children(fork, "merge")
        if policy.reviewed(fork):
            if user_id == EXPIRY_ACTOR and self.reviews.drafted(fork):
                return fork  # its draft waits for a person, or a person cancelled it: once per idle stretch
            return self.reviews.draft(fork, user_id, guidance)
        with self.liveness.holding("merge", self.liveness.new_owner()) as owner:
            if not self.store.merges.begin_merge(fork.id, user_id, owner, self.liveness.ttl, idle_before):
                now = self.store.sessions.fork(fork.id)
                if now.status is ForkStatus.OPEN and now.last_activity_at == fork.last_activity_at:
                    raise ReviewMoved(f"A summary of fork {fork.label} is being written right now.")
                raise ForkClosed(closed_reason(now))
            merged = self._summarise(self.store.sessions.fork(fork.id), user_id, guidance)
        self.reviews.close(fork.draft, merged, "Not used: the fork sat idle past its expiry and was merged."
                           if user_id == EXPIRY_ACTOR else f"Not used: <@{user_id}> merged the fork directly.")
        return merged

    def resume(self, fork: Fork) -> None:
        """Finish a merge whose worker died (the sweep calls this), exactly once; give up after
        MAX_ATTEMPTS, reopening the fork with a notice in its thread."""
        with self.liveness.holding("merge", self.liveness.new_owner()) as owner:
            attempt = self.store.merges.reclaim_merge(fork.id, owner, self.liveness.ttl)
            if not attempt:
                return
            metrics.TAKEOVERS.labels("merge").inc()
            fork = self.store.sessions.fork(fork.id)
            if one_too_many(attempt):
                self._give_up(fork)
            elif fork.status is ForkStatus.MERGING and fork.draft is not None:
                log.info("resuming the approved merge of fork %s (attempt %s)", fork.id, attempt)
                self.merging.finish_approved(fork, fork.draft.text)
            elif fork.status is ForkStatus.MERGING:
                log.info("resuming the merge of fork %s (attempt %s)", fork.id, attempt)
                self._summarise(fork, fork.merged_by or EXPIRY_ACTOR, "")
            else:
                log.info("announcing the merge of fork %s (attempt %s)", fork.id, attempt)
                self.merging.announce(fork)

    def _give_up(self, fork: Fork) -> None:
        log.warning("the merge of fork %s failed %s times; giving up", fork.id, MAX_ATTEMPTS)
        self.store.merges.give_up_merge(fork.id)
        if fork.status is ForkStatus.MERGING:
            reopened = self.store.sessions.fork(fork.id)
            safely(self.posts.note_in_thread, reopened,
                         f"⚠️ I tried {MAX_ATTEMPTS} times to merge this fork and could not finish — it is open "
                         "again; merge it once more (✅) to retry.")
            safely(self.posts.refresh_fork_root, reopened)

    def abandon(self, fork: Fork, user_id: str, idle_before=None) -> Fork:
        self.policies.of(fork.channel).check(fork, user_id, "abandon")
        if fork.status is ForkStatus.OPEN:
            self.merging.no_open_children(fork, "abandon")
        if fork.status is not ForkStatus.OPEN or not self.store.merges.abandon(fork.id, idle_before):
            raise ForkClosed(closed_reason(self.store.sessions.fork(fork.id)))
        abandoned = self.store.sessions.fork(fork.id)
        who = "It was closed after sitting idle" if user_id == EXPIRY_ACTOR else f"<@{user_id}> abandoned this fork"
        safely(self.posts.note_in_thread, abandoned,
                     f"{who}. Nothing was added to the channel's conversation.")
        safely(self.posts.refresh_fork_root, abandoned)
        self.reviews.close(fork.draft, abandoned, "Not merged: the fork was abandoned.")
        if self.agent:
            self.agent.session_status(abandoned, SessionStatus.CLOSED)
        return abandoned

    def _summarise(self, fork: Fork, user_id: str, guidance: str) -> Fork:
        try:
            summary, usage, _ = self.merging.write_summary(fork, user_id, guidance)
        except Exception:
            self.store.merges.cancel_merge(fork.id)
            raise
        return self.merging.finish(fork, summary, usage)

    def listings(self, forks: list[Fork]) -> list[ForkListing]:
        """Each fork with its stats, its MCP tool calls per connector among them."""
        calls: dict = {}
        for channel in {f.channel for f in forks}:
            calls[channel] = self.store.connector_use.in_channel(channel)
        return [ForkListing(f, replace(self.store.views.stats(f.id), connector_calls=tuple(
            calls[f.channel].get(f.number, {}).items()))) for f in forks]
