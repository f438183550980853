"""Reviewed summaries (THREADFORK_MERGE_REVIEW): a merge gesture first posts Claude's draft in the
fork's thread, and nothing enters the parent until someone presses Merge as is or saves an edit.

One summary request per draft; one live draft per fork (a new one supersedes the last, whose message
says so); a turn after the draft makes it stale, and Merge as is then asks for a redraft (an edit is
a person's own text and goes through). Approval is the fork's open → merging move, so two presses
merge once; the approved text is kept on the fork until the merge completes, so a crash resumes with
it rather than asking Claude again. The merge policy applies to every button.
"""
from __future__ import annotations

from dataclasses import replace

from ..domain.errors import ForkClosed, ForkNotFound, ReviewMoved, ThreadforkError
from ..domain.merge import closed_reason, ensure_mergeable
from ..domain.model import Channel, Draft, Fork, ForkStatus, Role, Usage
from .followups import safely
from .liveness import Liveness
from .merging import Merging
from .policy import Policies
from .ports import (Audience, Claims, ForkPosts, PrivateAnswers, Reviews as ReviewDrafts, Screens, Sessions, Spending,
                    TurnQueue, Work)
from .refusals import refuse


class Reviews:
    def __init__(self, posts: ForkPosts, screens: Screens, answers: PrivateAnswers, policies: Policies,
                 liveness: Liveness, merging: Merging,
                 *, work: Work, claims: Claims, sessions: Sessions, turns: TurnQueue, reviews: ReviewDrafts,
                 spending: Spending):
        self.work, self.claims, self.sessions, self.turns, self.reviews = work, claims, sessions, turns, reviews
        self.spending = spending
        self.posts = posts
        self.screens = screens
        self.answers = answers
        self.policies = policies
        self.liveness = liveness
        self.merging = merging  # writes the summary and completes the merge, as for any merge

    def draft(self, fork: Fork, user_id: str, guidance: str = "", replacing: int | None = None) -> Fork:
        """Write and post a draft; `replacing`: the live draft a Redraft replaces."""
        live = fork.draft
        if live is not None and replacing != live.number and not self.stale(fork, live):
            raise ReviewMoved(f"A draft summary of fork {fork.label} is already waiting in its thread: "
                              "*Merge as is*, *Edit*, *Redraft* or *Cancel* it there.")
        if replacing is not None and replacing != fork.draft_number:
            raise ReviewMoved(f"That draft of fork {fork.label} was already replaced by a newer one.")
        with self.liveness.holding("merge", self.liveness.new_owner()) as owner:
            number = self.reviews.begin_draft(fork.id, fork.draft_number, owner, self.liveness.ttl)
            if not number:
                now = self.sessions.fork(fork.id)
                if now.status is not ForkStatus.OPEN:
                    raise ForkClosed(closed_reason(now))
                raise ReviewMoved(f"A draft summary of fork {fork.label} is being written right now.")
            try:
                text, usage, seq = self.merging.write_summary(fork, user_id, guidance)
            except Exception:
                self.reviews.release_draft(fork.id, owner)  # the live draft, if any, stays
                raise
            if not self.record(fork, number, text, seq, usage, user_id, owner):
                return self.sessions.fork(fork.id)  # closed meanwhile (abandoned, expired)
        drafted = self.sessions.fork(fork.id)
        ts = self.posts.post_draft(drafted, drafted.draft, guidance)
        self.reviews.set_draft_ts(fork.id, number, ts)
        self.close(live, drafted, f"Replaced by draft {number} below.")
        return drafted

    def record(self, fork: Fork, number: int, text: str, seq: int, usage: Usage, user_id: str, owner: str) -> bool:
        """One unit of work: draft `number` live and its cost counted in the fork's channel; False (nothing kept)
        when the fork closed meanwhile or the claim is no longer `owner`'s."""
        with self.work():
            if not self.reviews.record_draft(fork.id, number, text, seq, usage, user_id, owner):
                return False
            self.spending.add(fork.home, usage, in_fork=True)  # last: its day's row stays locked
            return True

    def approve(self, fork_id: int, number: int, user_id: str, channel: Channel, edited: str | None = None) -> Fork:
        """Merge as is (`edited` None) or with a person's edit of draft `number`."""
        fork = self.fork_under_review(fork_id, number, channel)
        self.policies.of(fork.channel).check(fork, user_id, "merge")
        self.merging.no_open_children(fork, "merge")
        if edited is not None and edited.strip() == fork.draft.text.strip():
            edited = None  # saved untouched: merged as is, and not said to be edited
        if edited is None and self.stale(fork, fork.draft):
            raise ReviewMoved(f"Draft {number} of fork {fork.label} is stale: the thread went on after it was "
                              "written. *Redraft* it (or *Edit* it) before merging.")
        text = fork.draft.text if edited is None else edited
        if not self.reviews.approve(fork.id, number, text, user_id, edited is not None):
            raise ForkClosed(closed_reason(self.sessions.fork(fork.id)))
        # Claude still answering in the thread: the merge waits for that answer (merging.py), the root says so
        merged = self.merging.proceed(fork.id) or self.merging.waiting(fork.id)
        how = f"Merged with edits by <@{user_id}>." if edited is not None else f"Merged as is by <@{user_id}>."
        self.close(fork.draft, merged, how)
        return merged

    def redraft(self, fork_id: int, number: int, user_id: str, channel: Channel, guidance: str) -> Fork:
        fork = self.fork_under_review(fork_id, number, channel)
        self.policies.of(fork.channel).check(fork, user_id, "merge")
        self.merging.no_open_children(fork, "merge")  # a draft nobody could merge would be a request wasted
        return self.draft(fork, user_id, guidance, replacing=number)

    def cancel(self, fork_id: int, number: int, user_id: str, channel: Channel) -> None:
        fork = self.fork_under_review(fork_id, number, channel)
        self.policies.of(fork.channel).check(fork, user_id, "cancel the review of")
        if not self.reviews.drop_draft(fork.id, number):
            raise ReviewMoved(f"Draft {number} of fork {fork.label} is no longer waiting for review.")
        self.close(fork.draft, fork, f"Cancelled by <@{user_id}> — nothing was merged; the fork stays open.")

    def pressed(self, verb: str, fork_id: int, number: int, user_id: str, audience: Audience,
                trigger_id: str | None) -> None:
        """A button on a draft: `approve` and `cancel` act; `edit` and `redraft` open their modal."""
        channel = audience.channel
        try:
            if verb == "approve":
                self.approve(fork_id, number, user_id, channel)
            elif verb == "cancel":
                self.cancel(fork_id, number, user_id, channel)
            else:
                fork = self.fork_under_review(fork_id, number, channel)
                self.policies.of(fork.channel).check(fork, user_id, "merge")
                opener = self.screens.open_draft_editor if verb == "edit" else self.screens.ask_redraft_guidance
                opener(channel.team_id, trigger_id or "", fork, fork.draft)
        except ThreadforkError as error:
            refuse(self.answers, audience, error)

    def saved_edit(self, fork_id: int, number: int, user_id: str, audience: Audience, text: str) -> None:
        self._answering(audience, fork_id, self.approve, fork_id, number, user_id, audience.channel, text)

    def asked_redraft(self, fork_id: int, number: int, user_id: str, audience: Audience, guidance: str) -> None:
        self._answering(audience, fork_id, self.redraft, fork_id, number, user_id, audience.channel, guidance)

    def _answering(self, audience: Audience, fork_id: int, action, *args) -> None:
        """Run a modal's action; a refusal goes privately to its author in the fork's thread."""
        try:
            action(*args)
        except ThreadforkError as error:
            fork = self.sessions.fork(fork_id)
            thread = fork.root_ts if fork is not None and fork.channel == audience.channel else None
            refuse(self.answers, replace(audience, thread_ts=thread), error)

    def edit_refused(self, fork_id: int, number: int, user_id: str, channel: Channel, text: str) -> str | None:
        """Why an edit may not be merged, to show in its modal (None: it may)."""
        if not text.strip():
            return "The summary can't be empty — close this and press Cancel on the draft instead."
        try:
            fork = self.fork_under_review(fork_id, number, channel)
            self.policies.of(fork.channel).check(fork, user_id, "merge")
            self.merging.no_open_children(fork, "merge")
        except ThreadforkError as error:
            return str(error)
        return None

    def fork_under_review(self, fork_id: int, number: int, channel: Channel) -> Fork:
        """The fork whose live draft is `number`, or a clear refusal."""
        fork = self.sessions.fork(fork_id)
        if fork is None or fork.channel != channel:
            raise ForkNotFound("That fork no longer exists.")
        ensure_mergeable(fork)
        if fork.draft is None or fork.draft.number != number:
            raise ReviewMoved(f"Draft {number} of fork {fork.label} is no longer waiting for review"
                              + (" — a newer draft is in the thread." if fork.draft else "."))
        return fork

    def went_on(self, fork: Fork) -> None:
        """A turn was stored in a fork under review: its draft is stale; say so once."""
        draft = fork.draft
        if draft is None or not self.claims.mark(f"stale:{fork.id}:{draft.number}"):
            return
        safely(self.posts.note_in_thread, fork,
                     f"✏️ Draft {draft.number} of the summary is now stale: this thread went on after it was "
                     "written. Press *Redraft* on it (or *Edit* it) before merging.")

    def drafted(self, fork: Fork) -> bool:
        """A draft — waiting, or cancelled by a person — covers the thread as it is: the expiry asks Claude
        for one summary per idle stretch, not one per sweep."""
        return fork.drafted_seq is not None and not any(
            t.seq > fork.drafted_seq and t.role is Role.USER for t in self.turns.turns(fork.id))

    def stale(self, fork: Fork, draft: Draft) -> bool:
        return any(t.seq > draft.seq and t.role is Role.USER for t in self.turns.turns(fork.id))

    def close(self, draft: Draft | None, fork: Fork, outcome: str) -> None:
        """The draft's message loses its buttons and says what became of it."""
        if draft is not None and draft.ts:
            safely(self.posts.close_draft, fork, draft, outcome)
