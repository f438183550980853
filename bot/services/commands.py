"""Slash commands: `/fork`, `/merge`, `/context`, `/forks`. Slack delivers them only at a channel's
top level (never inside a thread); every answer to the caller is private, through the command's
response_url."""
from __future__ import annotations

from collections import Counter
from dataclasses import dataclass

from ..domain import memory
from ..domain.commands import parse_merge
from ..domain.errors import ChildrenOpen, ThreadforkError
from ..domain.model import Channel, ContextReport, ForkStatus, Role
from ..infrastructure import metrics
from .conversation import Speaker
from .access import SpendCaps
from .forks import Forks
from .policy import Policy
from .ports import (Audience, ChannelSettingsStore, ConnectorUse, Memories, People, PrivateAnswers, PrivateForks, Sessions,
                    Spending, TurnQueue, Views)
from .refusals import refuse

NO_OPEN_FORK = "There is no open fork in this channel to merge. `/fork [topic]` opens one."


@dataclass(frozen=True)
class SlashCommand:
    team_id: str
    channel_id: str
    user_id: str
    text: str
    response_url: str | None
    trigger_id: str | None = None  # opens a modal (valid for 3 seconds)

    @property
    def channel(self) -> Channel:
        return Channel(self.team_id, self.channel_id)

    @property
    def audience(self) -> Audience:
        """The caller, answered privately through the command's response_url."""
        return Audience(self.team_id, self.channel_id, self.user_id, response_url=self.response_url)


class SlashCommands:
    def __init__(self, answers: PrivateAnswers, people: People, forks: Forks, policy: Policy,
                 caps: SpendCaps | None = None,
                 *, sessions: Sessions, private: PrivateForks, turns: TurnQueue, views: Views,
                    channel_settings: ChannelSettingsStore, connector_use: ConnectorUse, spending: Spending,
                    memories: Memories):
        self.memories = memories
        self.sessions = sessions
        self.private = private
        self.turns = turns
        self.views = views
        self.channel_settings = channel_settings
        self.connector_use = connector_use
        self.spending = spending
        self.caps = caps
        self.answers = answers
        self.people = people
        self.forks = forks
        self.policy = policy

    def fork(self, command: SlashCommand) -> None:
        try:
            speaker = Speaker(command.user_id, self.people.display_name(command.team_id, command.user_id))
            result = self.forks.open(command.channel, speaker, command.text)
            if isinstance(result, str):
                self.answers.tell(command.audience, result)
        except ThreadforkError as error:
            self.answers.tell(command.audience, str(error))

    def merge(self, command: SlashCommand) -> None:
        request = None  # a number parse_merge refuses is named, so it is not "no fork" but "no such fork"
        try:
            request = parse_merge(command.text)
            fork = self.forks.resolve(command.channel, command.user_id, request.number)
            merged = metrics.merge("command", self.forks.merge, fork, command.user_id, request.guidance)
            if merged.merge_waiting:
                self.answers.tell(command.audience, f"Fork {merged.label} merges as soon as Claude finishes the "
                                                    "answer it is writing there; the summary will include it.")
            elif merged.status is ForkStatus.OPEN and merged.draft is not None:  # under review: it waits there
                self.answers.tell(command.audience, f"Draft {merged.draft.number} of fork {merged.label}'s summary "
                                                    "is in its thread: *Merge as is*, *Edit*, *Redraft* or *Cancel* it "
                                                    "there.")
        except ChildrenOpen as error:
            refuse(self.answers, command.audience, error)
        except ThreadforkError as error:
            open_forks = self.sessions.forks_in(command.channel, ForkStatus.OPEN)
            if request is not None and request.number is None and not open_forks:  # nothing to name: say so, not "name one"
                self.answers.tell(command.audience, NO_OPEN_FORK)
            else:
                self.answers.refuse_merge(command.audience, str(error), open_forks)

    def context(self, command: SlashCommand) -> None:
        parent = self.sessions.parent_id(command.channel)
        sessions = self.sessions
        turns = self.turns.turns(parent)
        settings = self.channel_settings.of(command.channel).over(self.policy.channel)
        remembered = memory.visible_to(self.memories.seen_in(command.channel), None)  # what every request carries
        report = ContextReport(
            size=self.views.context_size(parent), budget=self.policy.compact_at,
            compactions=sum(1 for t in turns if t.role is Role.COMPACTION),
            stop_reasons=dict(Counter(t.stop_reason for t in turns if t.stop_reason)),
            merged=self.forks.listings(sessions.forks_in(command.channel, ForkStatus.MERGED)),
            open=sessions.forks_in(command.channel, ForkStatus.OPEN),
            economy=self.views.channel_economy(command.channel),
            connector_calls=self.connector_use.in_channel(command.channel),
            spend=self.spending.report(command.channel),
            cap_usd=self.caps.read(command.channel).cap.cap_usd if self.caps else None,
            effort=settings.effort,
            memory=(len(remembered), memory.size(remembered), settings.memory_budget or 0),
        )
        self.answers.show_context(command.audience, report)

    def forks_list(self, command: SlashCommand) -> None:
        """The channel's open forks, and to the caller alone their own private forks of it (🔒)."""
        sessions = self.sessions
        mine = self.private.private_forks_of(command.channel, command.user_id)
        listings = self.forks.listings(sessions.forks_in(command.channel, ForkStatus.OPEN) + mine)
        self.answers.show_forks(command.audience, listings, sessions.fork_counts(command.channel))
