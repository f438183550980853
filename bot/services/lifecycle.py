"""The sweep: everything that happens without anyone watching, run by the scheduler.

Each step finds candidates, then claims each one with a conditional UPDATE before acting, so any
number of replicas can sweep the same database and nothing happens twice:
- merges whose worker died are finished (or announced) — crash-safe merge;
- answers cut off by a crash leave the context and the waiting turns are answered again;
- an idle fork gets one reminder, and after the expiry it is merged or abandoned;
- parents and forks over their token budget are compacted (see compaction.py);
- with a retention policy, turns and closed forks older than it are deleted (store.erasure.prune: one
  transaction, so replicas pruning at once delete each row once);
- deliveries whose process died are replayed, and day-old claims and deliveries pruned (intake.py);
- the conversations of workspaces that uninstalled the app are deleted after the retention (workspaces.py);
- file contents no turn shares any more are deleted, with their copies in Claude's file store.
"""
from __future__ import annotations

import logging
from datetime import datetime, timedelta

from ..domain.errors import NothingToMerge, ThreadforkError
from ..domain.merge import EXPIRY_ACTOR
from ..domain.model import Fork
from ..infrastructure import metrics
from .access import Access
from .attachments import Attachments
from .compaction import Compactor
from .conversation import Conversation
from .forks import Forks
from .merging import Merging
from .intake import Intake
from .policy import Policies
from .ports import Clock, Erasure, ForkPosts, Merges, Place, Replies, Sessions, Leases, Upkeep
from .workspaces import Workspaces

log = logging.getLogger(__name__)

INTERRUPTED = "⚠️ My previous answer here was interrupted (the bot restarted) — answering again now."


class Lifecycle:
    def __init__(self, replies: Replies, posts: ForkPosts, conversation: Conversation, forks: Forks,
                 merging: Merging, compactor: Compactor, intake: Intake, policies: Policies, workspaces: Workspaces,
                 attachments: Attachments, access: Access,
                 *, sessions: Sessions, leases: Leases, merges: Merges, upkeep: Upkeep, erasure: Erasure,
                    clock: Clock):
        self.access = access
        self.attachments = attachments
        self.sessions = sessions
        self.leases = leases
        self.merges = merges
        self.upkeep = upkeep
        self.erasure = erasure
        self.clock = clock
        self.workspaces = workspaces
        self.intake = intake
        self.replies = replies
        self.posts = posts
        self.conversation = conversation
        self.forks = forks
        self.merging = merging
        self.compactor = compactor
        self.policy = policies.base
        self.policies = policies  # a channel's own idle reminder and expiry

    def sweep(self) -> None:
        for step in (self.intake.replay_due, self.recover_merges, self.recover_replies, self.remind_idle_forks,
                     self.expire_idle_forks, self.compactor.sweep, self.apply_retention, self.intake.prune,
                     self.workspaces.forget_departed, self.attachments.drop_unused):
            try:
                step()
            except Exception:
                log.exception("sweep step %s failed", step.__name__)

    def recover_merges(self) -> None:
        for fork in self.merges.stuck_merges():
            try:
                self.merging.resume(fork)
            except ThreadforkError as error:
                log.warning("resuming the merge of fork %s failed: %s", fork.id, error)

    def recover_replies(self) -> None:
        grace = self.clock() - timedelta(seconds=self.policy.stall_grace)
        liveness = self.conversation.liveness
        for session_id in self.upkeep.stalled_sessions(grace):
            with liveness.holding("lease", liveness.new_owner()) as owner:
                if not self.leases.lease(session_id, owner, liveness.ttl):
                    continue
                metrics.TAKEOVERS.labels("reply").inc()
                try:
                    if self.upkeep.interrupt_streaming(session_id):
                        session = self.sessions.session(session_id)
                        self.replies.post_notice(Place(session.channel_id, session.thread_ts, session.team_id, None),
                                                 INTERRUPTED)
                finally:
                    self.leases.release(session_id, owner)
            self.conversation.drain(session_id)

    def remind_idle_forks(self) -> None:
        now = self.clock()
        for fork in self.upkeep.idle_forks(now - timedelta(seconds=self.policies.shortest()[0]), unreminded=True):
            try:
                self._remind(fork, now)
            except Exception:  # one fork's trouble must not keep the others from their reminders
                log.exception("reminding idle fork %s failed", fork.id)

    def _remind(self, fork: Fork, now: datetime) -> None:
        if self.access.closed(fork.channel):
            return  # Threadfork is off there: it posts nothing
        policy = self.policies.of(fork.channel)
        idle_before = now - timedelta(seconds=policy.idle_reminder)
        if fork.last_activity_at > idle_before or fork.last_activity_at <= now - timedelta(seconds=policy.expiry):
            return  # not idle long enough here, or expiring now (a reminder would come too late)
        if self.upkeep.claim_reminder(fork.id, idle_before):
            # under review an expiry only drafts: the reminder must not promise a merge
            fate = "draft" if policy.expiry_policy == "merge" and policy.reviewed(fork) else policy.expiry_policy
            self.posts.remind(fork, fate, policy.expiry)

    def expire_idle_forks(self) -> None:
        now = self.clock()
        # deepest first: a fork's children must close before it can
        idle = self.upkeep.idle_forks(now - timedelta(seconds=self.policies.shortest()[1]))
        for fork in sorted(idle, key=lambda f: -f.depth):
            idle_before = now - timedelta(seconds=self.policies.of(fork.channel).expiry)
            if fork.last_activity_at > idle_before or self.access.closed(fork.channel):
                continue  # this channel gives its forks longer, or Threadfork is off there
            try:
                if self.policy.expiry_policy == "abandon":
                    self.forks.abandon(fork, EXPIRY_ACTOR, idle_before=idle_before)
                else:
                    try:
                        metrics.merge("expiry", self.forks.merge, fork, EXPIRY_ACTOR, idle_before=idle_before)
                    except NothingToMerge:
                        # nobody ever wrote in it: there is no summary to add, and retrying
                        # every sweep would never succeed
                        self.forks.abandon(fork, EXPIRY_ACTOR, idle_before=idle_before)
            except ThreadforkError as error:
                log.info("expiring fork %s: %s", fork.id, error)
            except Exception:  # the next sweep tries again; the other forks go on
                log.exception("expiring fork %s failed", fork.id)

    def apply_retention(self) -> None:
        if self.policy.retention is not None:
            removed = self.erasure.prune(self.clock() - timedelta(seconds=self.policy.retention))
            if removed:
                log.info("retention: deleted %s turns older than %ss", removed, self.policy.retention)
