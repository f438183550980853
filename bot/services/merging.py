"""What every merge does once it is under way, reviewed or not: ask Claude for the summary (one
request, with the newer summaries it may contradict), put it into the parent (once), and post it.
A fork with open forks of its own closes only after them.

A merge is carried out only once nothing is in flight in its fork (invariant 13): `proceed` takes it
(one taker across replicas, none while an answer is being written or waits to be) and carries it out —
called by the gesture that asked for it, by whoever records the answer it waited for, and by the sweep.
So the summary covers that answer, and nothing of the fork is posted after the merge's own note."""
from __future__ import annotations

import logging

from ..domain.agent import SessionStatus
from ..domain.caching import CacheMode
from ..domain.context import estimate_tokens, with_request
from ..domain.errors import ChildrenOpen, NothingToMerge, ThreadforkError
from ..domain.merge import EXPIRY_ACTOR, conflicts_request, mark_conflicts, merge_prompt, summary_turn_text
from ..domain.model import Fork, ForkStatus, Role, Session, TurnStatus, Usage
from ..domain.queue import one_too_many
from .followups import safely
from .liveness import Liveness
from .model_inputs import Connections, ModelInputs
from .ports import MAX_ATTEMPTS, AgentSessions, ForkPosts, Merges, Model, Sessions, Spending, TurnQueue, Views, Work

log = logging.getLogger(__name__)


class Merging:
    def __init__(self, inputs: ModelInputs, posts: ForkPosts, model: Model, liveness: Liveness,
                 connections: Connections | None = None, agent: AgentSessions | None = None,
                 cache: CacheMode = CacheMode.AUTO,
                 *, work: Work, sessions: Sessions, turns: TurnQueue, merges: Merges, views: Views,
                 spending: Spending):
        self.liveness = liveness  # the claim on a merge being carried out, renewed while it runs
        self.agent = agent  # a merged fork's agent session closes (best effort)
        self.work, self.sessions, self.turns, self.merges, self.views = work, sessions, turns, merges, views
        self.spending = spending
        self.inputs = inputs
        self.cache = cache  # THREADFORK_CACHE_TTL: the summary request keeps the fork's breakpoints
        self.posts = posts
        self.model = model
        self.connections = connections  # the fork's connectors stay in its summary request: same cached prefix

    def answered(self, session: Session) -> None:
        """Whoever answered the session recorded every answer waiting there and let go of it: a merge that
        waited for them goes ahead now, with them."""
        fork = self.sessions.fork(session.fork.id) if session.fork else None
        if fork is not None and fork.merge_waiting:
            self.resume(fork)

    def resume(self, fork: Fork) -> None:
        """Carry out a merge nobody is carrying out — asked for while Claude was answering, or whose worker
        died — once nothing is in flight in the fork (exactly once; after MAX_ATTEMPTS it gives up, reopening
        the fork with a notice in its thread). Nobody waits on it to be told privately: a failed summary
        reopens the fork and says so in its thread."""
        try:
            self.proceed(fork.id)
        except Exception as error:
            log.warning("merging fork %s failed: %s", fork.id,
                        error if isinstance(error, ThreadforkError) else type(error).__name__)
            now = self.sessions.fork(fork.id)
            if now is not None and now.status is ForkStatus.OPEN:
                why = str(error).rstrip(".") if isinstance(error, ThreadforkError) else "something went wrong"
                safely(self.posts.note_in_thread, now, f"⚠️ I could not merge this fork ({why}) — it is open "
                                                       "again; merge it once more (✅) to retry.")
                safely(self.posts.refresh_fork_root, now)

    def no_open_children(self, fork: Fork, verb: str) -> None:
        children = self.sessions.children_of(fork.id)
        if children:
            names = ", ".join(f"#{c.number}" for c in children)
            some = len(children) > 1
            raise ChildrenOpen(f"Fork {fork.label} can't be {verb}d yet: its own fork{'s' if some else ''} {names} "
                               f"{'are' if some else 'is'} still open. Merge or abandon {'them' if some else 'it'} "
                               "first.", children)

    def proceed(self, fork_id: int) -> Fork | None:
        """Carry out the fork's merge if nobody is and nothing is in flight in it: the fork once merged (or
        after its last try, given up), None when it was not ours to take. A failed summary reopens the fork
        and raises."""
        with self.liveness.holding("merge", self.liveness.new_owner()) as owner:
            attempt = self.merges.take_merge(fork_id, owner, self.liveness.ttl)
            if not attempt:
                return None
            fork = self.sessions.fork(fork_id)
            if one_too_many(attempt):
                return self._give_up(fork)
            if attempt > 1:
                log.info("resuming the merge of fork %s (attempt %s)", fork.id, attempt)
            if fork.status is ForkStatus.MERGED:
                self.announce(fork)
                return self.sessions.fork(fork_id)
            if fork.draft is not None:  # an approved draft (a direct merge drops the live one)
                return self.finish_approved(fork, fork.draft.text)
            try:
                summary, usage, _ = self.write_summary(fork, fork.merged_by or EXPIRY_ACTOR, fork.merge_guidance)
            except Exception:
                self.merges.cancel_merge(fork.id)
                raise
            return self.finish(fork, summary, usage)

    def waiting(self, fork_id: int) -> Fork:
        """A merge not ours to carry out (Claude is still answering, or another taker was quicker): while
        it waits, the root says so. Whoever carries it out refreshes the root once it ends; if that came
        before this refresh, the root is refreshed once more."""
        fork = self.sessions.fork(fork_id)
        if fork.merge_waiting:
            safely(self.posts.refresh_fork_root, fork)
            now = self.sessions.fork(fork_id)
            if now.status is not ForkStatus.MERGING and (now.summary_ts or now.status is ForkStatus.OPEN):
                safely(self.posts.refresh_fork_root, now)
                return now
        return fork

    def has_turns(self, fork: Fork, turns: list | None = None) -> None:
        """Refuse a merge of a fork nobody has talked in (a turn waiting for its answer counts)."""
        turns = self.turns.turns(fork.id) if turns is None else turns
        if not any(t.role in (Role.USER, Role.ASSISTANT) for t in turns):
            raise NothingToMerge(f"Fork {fork.label} has no turns yet — nothing to merge. "
                                 "Talk in its thread first, or abandon it.")

    def _give_up(self, fork: Fork) -> Fork:
        log.warning("the merge of fork %s failed %s times; giving up", fork.id, MAX_ATTEMPTS)
        self.merges.give_up_merge(fork.id)
        given_up = self.sessions.fork(fork.id)
        if fork.status is ForkStatus.MERGING:
            safely(self.posts.note_in_thread, given_up,
                   f"⚠️ I tried {MAX_ATTEMPTS} times to merge this fork and could not finish — it is open "
                   "again; merge it once more (✅) to retry.")
            safely(self.posts.refresh_fork_root, given_up)
        return given_up

    def write_summary(self, fork: Fork, user_id: str, guidance: str) -> tuple[str, Usage, int]:
        """Ask Claude for the fork's summary (one request): its text, conflicts marked, the call's usage
        and the fork's last seq it covers."""
        turns = self.turns.turns(fork.id)
        self.has_turns(fork, turns)
        newer = self.merges.summaries_since(fork.parent_id, _conflict_window(fork))
        prompt = merge_prompt(user_id, guidance) + (conflicts_request(newer) if newer else "")
        request = self.inputs.of_fork(fork, turns, self.connections, self.cache)
        completion = self.model.complete(with_request(request, prompt))
        summary = mark_conflicts(completion.text) if newer else completion.text
        return summary, completion.usage, turns[-1].seq

    def finish_approved(self, fork: Fork, text: str) -> Fork:
        """`finish` for a summary a person approved (as drafted, or edited): its drafts' own usage already
        counts in the fork's burn; what it adds to the parent is its size."""
        return self.finish(fork, text, Usage(output_tokens=estimate_tokens(text)))

    def finish(self, fork: Fork, summary: str, usage: Usage) -> Fork:
        """A merging fork's summary enters its parent (once: the store refuses a second time), then is posted."""
        parent_text = summary_turn_text(fork, fork.merged_by or EXPIRY_ACTOR, summary, fork.summary_edited_by)
        self.merge_in(fork, parent_text, summary, usage)
        merged = self.sessions.fork(fork.id)
        self.announce(merged)
        return merged

    def merge_in(self, fork: Fork, parent_text: str, summary: str, usage: Usage) -> None:
        """One unit of work: merging → merged, the summary appended to the parent (as `parent_text`) and its cost
        added to the fork's channel; nothing of it when the fork left the merging state (raises)."""
        with self.work():
            if not self.merges.mark_merged(fork.id, summary, usage):
                raise RuntimeError(f"fork {fork.id} left the merging state")
            self.turns.append_turn(fork.parent_id, Role.SUMMARY, parent_text, TurnStatus.COMPLETE, usage=usage,
                                   source_fork_id=fork.id)
            self.spending.add(fork.home, usage, in_fork=True)  # last: its day's row stays locked

    def announce(self, fork: Fork) -> None:
        """Post the summary, then the thread note and the root update. A crash before the post
        leaves the summary on the fork for the sweep to announce."""
        if self.agent:
            self.agent.session_status(fork, SessionStatus.CLOSED)
        try:
            ts = self.posts.post_merge(fork, self.views.stats(fork.id), self.merges.summary_of(fork.id))
        except Exception:
            log.exception("posting the summary of fork %s failed; the sweep will retry", fork.id)
            return
        self.merges.set_summary_ts(fork.id, ts)
        fork = self.sessions.fork(fork.id)
        who = ("Merged automatically after sitting idle" if fork.merged_by == EXPIRY_ACTOR
               else f"<@{fork.merged_by}> merged this fork into the channel")
        safely(self.posts.note_in_thread, fork, f"{who}.")
        safely(self.posts.refresh_fork_root, fork)


def _conflict_window(fork: Fork) -> int:
    """The parent's seq after which merged summaries are news to this fork: its fork point, or for a
    fresh fork the parent's last seq when it opened."""
    if fork.fork_point_seq is not None:
        return fork.fork_point_seq
    return fork.opened_at_seq or 0
