"""The use cases, one field each: what the Slack listeners and the scheduler call. bot/app.py `wire_services`
makes them, in order; nothing here makes anything.

`intake` (the durable inbox), `router` (people's messages), `commands` (slash commands), `gestures`
(reactions, buttons, shortcuts, edits, App Home), `budgets`, `forks`, `reviews` (summaries approved before
they merge), `adoption` (a thread mentioned into a fork), `conversation`, `lifecycle` (the sweep), `liveness`
(claims kept alive by a heartbeat), `workspaces` (installs and uninstalls), `stopping` (Stop on an answer
being written), `pane` (the agent pane: what people view, private forks, suggested prompts), `remembering`
(channel memory). Domain errors
become a private answer to the person at the edge of each use case; nothing else changes when one is raised.
"""
from __future__ import annotations

from dataclasses import dataclass

from .access import Access
from .adoption import Adoption
from .attachments import Attachments
from .budgets import Budgets
from .channel_admin import ChannelAdmin
from .commands import SlashCommands
from .conversation import Conversation
from .forks import Forks
from .gestures import Gestures
from .incoming import Intake
from .lifecycle import Lifecycle
from .liveness import Liveness, Stopping
from .pane import AgentPane
from .policy import Policies
from .ports import BotUsers, Chat
from .remembering import Remembering
from .reviews import Reviews
from .incoming import Router
from .workspaces import Workspaces


@dataclass(frozen=True)
class Services:
    chat: Chat
    bot_user_id: BotUsers  # the bot's user id in a team
    policies: Policies
    liveness: Liveness
    intake: Intake
    stopping: Stopping
    conversation: Conversation
    budgets: Budgets
    reviews: Reviews
    forks: Forks
    workspaces: Workspaces
    attachments: Attachments
    access: Access
    lifecycle: Lifecycle
    adoption: Adoption
    pane: AgentPane
    router: Router
    commands: SlashCommands
    channel_admin: ChannelAdmin
    gestures: Gestures
    remembering: Remembering  # channel memory: `remember`, its notes' buttons, `/threadfork memory`

    def sweep(self) -> None:
        """Reminders, expiry, compaction and crash recovery; the scheduler runs it periodically."""
        self.lifecycle.sweep()

    def heartbeat(self) -> None:
        """Keep alive every claim this process holds (the scheduler runs it every third of the lease)."""
        self.liveness.beat()

    def healthy(self) -> None:
        """Raises when the store cannot be written."""
        self.liveness.healthy()

    def first_delivery(self, event_id: str) -> bool:
        """True once per Slack event id, whichever replica sees it first."""
        return self.intake.first_delivery(event_id)
