"""Fork token budgets: a fork that has burned its budget stops answering until someone merges,
abandons, or presses Continue (which raises the budget by the configured amount)."""
from __future__ import annotations

from ..domain.errors import NotAllowed
from ..domain.model import Channel, Fork
from ..domain.settings import ChannelSettings
from .policy import Policies
from .ports import Audience, Claims, ForkBudgets, ForkPosts, PrivateAnswers, Sessions, Views


class Budgets:
    def __init__(self, posts: ForkPosts, answers: PrivateAnswers, policies: Policies,
                 *, claims: Claims, sessions: Sessions, budgets: ForkBudgets, views: Views):
        self.claims, self.sessions, self.budgets, self.views = claims, sessions, budgets, views
        self.posts = posts
        self.answers = answers
        self.policies = policies

    def exhausted(self, fork: Fork, chosen: ChannelSettings | None = None) -> bool:
        budget = self.policies.of(fork.channel, chosen).fork_token_budget
        if not budget:
            return False
        burned, limit = self.standing(fork, budget)
        return burned >= limit

    def standing(self, fork: Fork, budget: int) -> tuple[int, int]:
        """Tokens the fork has burned, and its budget as raised by Continue so far."""
        limit = budget + self.budgets.budget_extra(fork.id)
        return self.views.stats(fork.id).burned.total, limit

    def notify_if_reached(self, fork: Fork, chosen: ChannelSettings | None = None) -> None:
        """After an answer: one notice (with Merge, Abandon, Continue) per budget reached. `chosen`: the
        channel's settings the answer's turn was read under, if any."""
        budget = self.policies.of(fork.channel, chosen).fork_token_budget
        if not budget:
            return
        burned, limit = self.standing(fork, budget)
        if burned >= limit and self.claims.mark(f"budget:{fork.id}:{limit}"):
            self.posts.budget_reached(fork, burned, limit)

    def raise_limit(self, fork_id: int, user_id: str, channel: Channel) -> None:
        """The Continue button."""
        fork = self.sessions.fork(fork_id)
        audience = Audience(channel.team_id, channel.id, user_id)
        policy = self.policies.of(channel)
        if fork is None or fork.channel != channel or not policy.fork_token_budget:
            self.answers.tell(audience, "That fork no longer has a budget to raise.")
            return
        try:
            policy.check(fork, user_id, "raise the budget of")
        except NotAllowed as refusal:
            self.answers.tell(audience, str(refusal))
            return
        self.budgets.raise_budget(fork.id, policy.fork_token_budget)
        _, limit = self.standing(fork, policy.fork_token_budget)
        self.posts.note_in_thread(fork, f"<@{user_id}> raised this fork's token budget to {limit:,}. Carry on — "
                                        "react 🔁 to a message I didn't answer to get its answer now.")
