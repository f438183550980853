"""Opening, merging and abandoning forks (invariants 5 and 7).

A merge claims the fork with one conditional update (open → merging); only the winner asks
Claude for the summary, and the summary enters the parent in the same transaction that marks
the fork merged. Every other attempt gets a clear answer and changes nothing.
"""
from __future__ import annotations

import logging
from dataclasses import replace

from ..domain.commands import FORK_USAGE, HelpCommand, parse_fork
from ..domain.context import with_request
from ..domain.errors import ForkClosed, ForkNotFound, NothingToMerge
from ..domain.merge import EXPIRY_ACTOR, closed_reason, ensure_mergeable, merge_prompt, summary_turn_text
from ..domain.model import Channel, Fork, ForkListing, ForkStatus, Role, Session
from .conversation import Conversation, Speaker
from .model_inputs import fork_model_input
from .liveness import Liveness
from .policy import Policy
from .ports import MAX_ATTEMPTS, Chat, Model, Store

log = logging.getLogger(__name__)


class Forks:
    def __init__(self, store: Store, chat: Chat, model: Model, conversation: Conversation, policy: Policy,
                 liveness: Liveness):
        self.liveness = liveness
        self.store = store
        self.chat = chat
        self.model = model
        self.conversation = conversation
        self.policy = policy

    def open(self, channel: Channel, speaker: Speaker, text: str,
             origin_ts: str | None = None) -> Fork | str:
        """Open a fork from `/fork` arguments (or from a message, `origin_ts`); returns the fork, or
        help text to show privately."""
        command = parse_fork(text)
        if isinstance(command, HelpCommand):
            return FORK_USAGE
        fork = self.store.sessions.create_fork(channel, speaker.user_id, command.mode, command.topic,
                                               origin_ts=origin_ts)
        if fork.fork_point_seq:
            fork = replace(fork, inherited=self.store.views.context_size(fork.parent_id, fork.fork_point_seq))
        try:
            root_ts = self.chat.post_fork_root(fork)
        except Exception:
            self.store.merges.abandon(fork.id)  # a fork nobody can see must not stay open
            raise
        self.store.sessions.set_root(fork.id, root_ts, fork.inherited)
        fork = self.store.sessions.fork(fork.id)
        if command.topic:
            self.conversation.submit(Session(fork.id, fork.channel_id, fork.team_id, fork), speaker, command.topic,
                                     None)
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

    def merge(self, fork: Fork, user_id: str, guidance: str = "", idle_before=None) -> Fork:
        self.policy.check(fork, user_id, "merge")
        ensure_mergeable(fork)
        with self.liveness.holding("merge", self.liveness.new_owner()) as owner:
            if not self.store.merges.begin_merge(fork.id, user_id, owner, self.liveness.ttl, idle_before):
                raise ForkClosed(closed_reason(self.store.sessions.fork(fork.id)))
            return self._summarise(self.store.sessions.fork(fork.id), user_id, guidance)

    def resume(self, fork: Fork) -> None:
        """Finish a merge whose worker died (the sweep calls this), exactly once; give up after
        MAX_ATTEMPTS, reopening the fork with a notice in its thread."""
        with self.liveness.holding("merge", self.liveness.new_owner()) as owner:
            attempt = self.store.merges.reclaim_merge(fork.id, owner, self.liveness.ttl)
            if not attempt:
                return
            fork = self.store.sessions.fork(fork.id)
            if attempt > MAX_ATTEMPTS:
                self._give_up(fork)
            elif fork.status is ForkStatus.MERGING:
                log.info("resuming the merge of fork %s (attempt %s)", fork.id, attempt)
                self._summarise(fork, fork.merged_by or EXPIRY_ACTOR, "")
            else:
                log.info("announcing the merge of fork %s (attempt %s)", fork.id, attempt)
                self._announce(fork)

    def _give_up(self, fork: Fork) -> None:
        log.warning("the merge of fork %s failed %s times; giving up", fork.id, MAX_ATTEMPTS)
        self.store.merges.give_up_merge(fork.id)
        if fork.status is ForkStatus.MERGING:
            reopened = self.store.sessions.fork(fork.id)
            self._safely(self.chat.note_in_thread, reopened,
                         f"⚠️ I tried {MAX_ATTEMPTS} times to merge this fork and could not finish — it is open "
                         "again; merge it once more (✅) to retry.")
            self._safely(self.chat.refresh_fork_root, reopened)

    def abandon(self, fork: Fork, user_id: str, idle_before=None) -> Fork:
        self.policy.check(fork, user_id, "abandon")
        if fork.status is not ForkStatus.OPEN or not self.store.merges.abandon(fork.id, idle_before):
            raise ForkClosed(closed_reason(self.store.sessions.fork(fork.id)))
        abandoned = self.store.sessions.fork(fork.id)
        who = "It was closed after sitting idle" if user_id == EXPIRY_ACTOR else f"<@{user_id}> abandoned this fork"
        self._safely(self.chat.note_in_thread, abandoned,
                     f"{who}. Nothing was added to the channel's conversation.")
        self._safely(self.chat.refresh_fork_root, abandoned)
        return abandoned

    def _summarise(self, fork: Fork, user_id: str, guidance: str) -> Fork:
        try:
            if not any(t.role in (Role.USER, Role.ASSISTANT) for t in self.store.turns.turns(fork.id)):
                raise NothingToMerge(f"Fork {fork.label} has no turns yet — nothing to merge. "
                                     "Talk in its thread first, or abandon it.")
            request = with_request(fork_model_input(self.store.turns, fork), merge_prompt(user_id, guidance))
            completion = self.model.complete(request)
        except Exception:
            self.store.merges.cancel_merge(fork.id)
            raise
        self.store.merges.complete_merge(fork, summary_turn_text(fork, user_id, completion.text), completion.text,
                                  completion.usage)
        merged = self.store.sessions.fork(fork.id)
        self._announce(merged)
        return merged

    def listings(self, forks: list[Fork]) -> list[ForkListing]:
        return [ForkListing(f, self.store.views.stats(f.id)) for f in forks]

    def _announce(self, fork: Fork) -> None:
        """Post the summary, then the thread note and the root update. A crash before the post
        leaves the summary on the fork for the sweep to announce."""
        try:
            ts = self.chat.post_merge(fork, self.store.views.stats(fork.id), self.store.merges.summary_of(fork.id))
        except Exception:
            log.exception("posting the summary of fork %s failed; the sweep will retry", fork.id)
            return
        self.store.merges.set_summary_ts(fork.id, ts)
        fork = self.store.sessions.fork(fork.id)
        who = ("Merged automatically after sitting idle" if fork.merged_by == EXPIRY_ACTOR
               else f"<@{fork.merged_by}> merged this fork into the channel")
        self._safely(self.chat.note_in_thread, fork, f"{who}.")
        self._safely(self.chat.refresh_fork_root, fork)

    @staticmethod
    def _safely(call, *args) -> None:
        try:
            call(*args)
        except Exception:
            log.exception("a follow-up Slack update failed (%s)", getattr(call, "__name__", call))
