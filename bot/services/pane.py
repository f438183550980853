"""The agent pane: the bot's DM beside the channel a person views (Slack's Agent messaging experience).

- What each person views is remembered from app_context_changed (the store's Pane, shared by replicas), before
  the event is acknowledged, in the order the views happened; the context Slack attaches to a DM message wins
  over it.
- A DM message written at the DM's top level while its writer views channel C opens a private fork of
  C's conversation: the DM thread under that message is an inherited fork of C's parent, owned by them,
  its turns in the DM thread (C's parent never holds one), numbered in the DM (C's numbering, `/forks`,
  `/context` and App Home of anyone else show nothing of it). Its review is always on (Policy.reviewed):
  only a summary its owner approves is posted in C and appended to C's parent; abandoning shares nothing.
- Only a member of C may fork it privately, and only where the bot is in C: one membership read when the
  fork is opened, never per turn; otherwise one private answer (once a day per person and channel) says
  why, and the DM answers as it does without a channel in view. Without a channel in view the DM works
  as always.
- Opening the DM (its Messages tab) suggests up to four prompts that fit what the person views — a
  channel only when they are a member of it (a context may name one they are not in: its name stays
  unsaid).
"""
from __future__ import annotations

import logging
from collections.abc import Sequence

from ..domain.agent import in_order, in_view, one_line, session_title, suggested_prompts
from ..domain.errors import ChatUnavailable
from ..domain.model import Channel, ContextSize, Fork
from .access import Access
from .followups import safely
from .policy import Policies
from .ports import (AgentSessions, Audience, Channels, Claims, ForkPosts, Pane, PrivateAnswers, PrivateForks, Sessions,
                    Views)

log = logging.getLogger(__name__)

TOPIC_LIMIT = 150  # characters of the first message that name a private fork
NOT_A_MEMBER = ("🔒 I can't open a private fork of <#{channel}> for you: you're not a member of it. I'll answer "
                "here without its conversation.")
BOT_NOT_IN = ("🔒 I'm not in <#{channel}>, so I can't open a private fork of its conversation — invite me there "
              "with `/invite @Threadfork`. I'll answer here without it.")
UNCHECKED = ("🔒 I couldn't check who is in <#{channel}> just now, so I'll answer here without its conversation. "
             "Try again in a minute to fork it privately.")


class AgentPane:
    def __init__(self, posts: ForkPosts, answers: PrivateAnswers, channels: Channels,
                 agent: AgentSessions, access: Access, policies: Policies,
                 *, claims: Claims, sessions: Sessions, private: PrivateForks, views: Views, pane: Pane):
        self.claims, self.sessions, self.private, self.views, self.pane = claims, sessions, private, views, pane
        self.posts = posts
        self.answers = answers
        self.channels = channels
        self.agent = agent
        self.access = access
        self.policies = policies

    def viewed(self, team_id: str, user_id: str, channels: list[str], event_ts: str) -> None:
        """app_context_changed: what the person views (`channels`: those Slack names, most relevant first) since
        `event_ts` — unless a later view arrived first."""
        self.pane.viewed(team_id, user_id, in_view(channels), in_order(event_ts))

    def in_view(self, team_id: str, user_id: str, attached: Sequence[str] | None) -> str | None:
        """The channel a DM message was written beside: the message's own context when it carries one (an empty
        one: no channel in view), else the latest app_context_changed."""
        if attached is not None:
            return in_view(attached)
        return self.pane.viewing(team_id, user_id)

    def open_private(self, home_id: str, dm: Channel, root_ts: str, user_id: str, text: str) -> Fork | None:
        """The private fork of `home_id` whose thread is the DM message `root_ts` (made now if it is new); None
        after telling the person why they may not fork that channel."""
        existing = self.sessions.fork_by_message(dm, root_ts)
        if existing is not None:
            return existing
        home = Channel(dm.team_id, home_id)
        why, refusal, name = self._refusal(home, user_id)
        if refusal:
            # once a day for each reason, not at every message written beside that channel
            if self.claims.claim(f"pane:{dm.team_id}:{user_id}:{home_id}:{why}"):
                self.answers.tell(Audience(dm.team_id, dm.id, user_id), refusal)
            return None
        opened = self.private.open_private_fork(home, dm, root_ts, user_id, one_line(text, TOPIC_LIMIT),
                                                      self.policies.defaults)
        fork = opened.fork
        if opened.new:
            inherited = (self.views.context_size(fork.parent_id, fork.fork_point_seq) if fork.fork_point_seq
                         else ContextSize(0, 0))
            self.sessions.set_root(fork.id, root_ts, inherited)
            fork = self.sessions.fork(fork.id)
            log.info("private fork %s of channel %s opened", fork.id, home_id)
            safely(self.posts.post_private_intro, fork, name)
            self.agent.session_opened(fork, session_title(fork))
        return fork

    def _refusal(self, home: Channel, user_id: str) -> tuple[str, str | None, str | None]:
        """Why `user_id` may not fork `home` privately — a reason's name and the answer saying it (None: they
        may) — and the channel's name."""
        refused = self.access.refusal(home, user_id)
        if refused:
            return "access", refused, None
        try:
            member = self.channels.membership(home, user_id)
        except ChatUnavailable:
            return "unchecked", UNCHECKED.format(channel=home.id), None
        if not member.bot_in:
            return "bot", BOT_NOT_IN.format(channel=home.id), member.name
        if not member.person_in:
            return "person", NOT_A_MEMBER.format(channel=home.id), member.name
        return "", None, member.name

    def dm_opened(self, team_id: str, user_id: str, dm_channel_id: str) -> None:
        """The person opened the bot's DM: prompts that fit the channel they view."""
        home = self.pane.viewing(team_id, user_id)
        name = None
        if home:
            try:
                member = self.channels.membership(Channel(team_id, home), user_id)
            except ChatUnavailable:
                member = None
            home, name = (home, member.name) if member is not None and member.person_in else (None, None)
        self.agent.suggest_prompts(team_id, dm_channel_id, suggested_prompts(home, name))
