"""The use cases, wired together once: what the Slack listeners and the scheduler call.

Each attribute is one concern: `intake` (the durable inbox), `router` (people's messages),
`commands` (slash commands), `gestures` (reactions, buttons, shortcuts, edits, App Home), `budgets`,
`forks`, `reviews` (summaries approved before they merge), `adoption` (a thread mentioned into a fork),
`conversation`, `remembering` (channel memory), `lifecycle` (the sweep), `liveness` (claims kept alive by a heartbeat), `workspaces`
(installs and uninstalls), `stopping` (Stop on an answer being written), `pane` (the agent pane: what
people view, private forks, suggested prompts). Domain errors become a private answer to the person at the edge of each use
case; nothing else changes when one is raised.
"""
from __future__ import annotations

from collections.abc import Mapping
from concurrent.futures import Executor
from dataclasses import dataclass, field

from ..domain.model import Session, Usage
from ..domain.settings import ChannelSettings, Choices
from .adoption import Adoption
from .attachments import Attachments
from .budgets import Budgets
from .caps import SpendCaps
from .commands import SlashCommands
from .compaction import Compactor
from .conversation import Conversation
from .forks import Forks
from .gestures import Gestures
from .intake import Deliveries, Intake
from .lifecycle import Lifecycle
from .merging import Merging
from .liveness import Liveness
from .access import Access, AccessLists
from .channel_admin import ChannelAdmin
from .policy import Policies, Policy
from .connections import Connections
from .ports import BotUsers, Chat, Model, Secrets, Store
from .memory_tool import MemoryTools
from .remembering import Remembering
from .reviews import Reviews
from .pane import AgentPane
from .routing import Router
from .stopping import Stopping
from .workspaces import Workspaces


@dataclass(frozen=True)
class ChannelOptions:
    """What `/threadfork` offers and starts from, and the allow-lists (from Settings at wiring time)."""

    defaults: ChannelSettings
    choices: Choices
    lists: AccessLists = AccessLists()
    secrets: Secrets | None = None  # seals connectors' tokens (THREADFORK_SECRET_KEY)
    connector_tokens: Mapping[str, str] = field(default_factory=dict)  # THREADFORK_CONNECTORS' tokens, by name


class Services:
    def __init__(self, store: Store, chat: Chat, model: Model, bot_user_id: str | None | BotUsers,
                 policy: Policy = Policy(), channels: ChannelOptions | None = None,
                 workspaces: Workspaces | None = None, deliveries: Deliveries | None = None,
                 watcher: Executor | None = None):
        """`chat`: Slack's ports (each service is given the ones it uses); `bot_user_id`: the bot's user id,
        or (many workspaces) a function of the team giving it; `channels`: what channels may choose and who may
        use Threadfork (default: everyone, one model); `workspaces`: installs and departures (the OAuth flow needs
        it before the Slack app exists); `deliveries`: the Slack app's replay of kept deliveries (none: the
        sweep replays nothing, as in the unit tests and the eval); `watcher`: the thread Stop's watcher runs on
        (none: a stop is obeyed only where it lands)."""
        # without them: the model and tools the Model port was configured with (None), nothing to choose
        channels = channels or ChannelOptions(policy.channel, Choices((), ()))
        self.store = store
        self.chat = chat
        self.bot_user_id: BotUsers = bot_user_id if callable(bot_user_id) else (lambda team_id: bot_user_id)
        self.policy = policy
        self.policies = Policies(policy, store, channels.defaults)  # each channel's, its settings over `policy`
        self.liveness = Liveness(store, policy.lease)
        self.intake = Intake(store, self.liveness, deliveries)
        self.compactor = Compactor(store, model, policy)
        self.budgets = Budgets(store, chat.posts, chat.answers, self.policies)
        self.connections = Connections(store.connector_tokens, channels.secrets, channels.defaults.connectors or (),
                                       channels.connector_tokens)
        self.stopping = Stopping(store.stops, store.sessions, merge_policy=lambda c: self.policies.of(c).merge_policy,
                                 answers=chat.answers, watcher=watcher)
        self.caps = SpendCaps(store, chat.replies, channels.defaults.monthly_spend_cap_usd, channels.lists.admins)
        self.access = Access(store, chat.answers, chat.people, channels.lists)
        self.remembering = Remembering(store, chat.memory, chat.answers, chat.people, self.policies, self.access)
        self.conversation = Conversation(store, chat.replies, chat.answers, model, self.liveness,
                                         on_answered=self._after_answer, connections=self.connections,
                                         on_released=lambda session: self.forks.answered(session),
                                         stopping=self.stopping, agent=chat.agent, cache=policy.cache_ttl,
                                         compact=self.compactor.compact, caps=self.caps,
                                         memory_tools=MemoryTools(self.remembering, policy.channel.memory_tool))
        merging = Merging(store, chat.posts, model, self.liveness, self.connections, chat.agent, policy.cache_ttl)
        self.reviews = Reviews(store, chat.posts, chat.screens, chat.answers, self.policies, self.liveness, merging)
        self.forks = Forks(store, chat.posts, self.conversation, self.policies, merging, self.reviews,
                           chat.agent, self.caps)
        self.workspaces = workspaces or Workspaces(store, policy.retention_after_uninstall)
        self.attachments = Attachments(store, chat.shared, model, policy.max_file_bytes)
        self.lifecycle = Lifecycle(store, chat.replies, chat.posts, self.conversation, self.forks, self.compactor,
                                   self.intake, self.policies, self.workspaces, self.attachments, self.access)
        self.adoption = Adoption(store, chat.posts, chat.people, chat.shared, self.liveness, self.bot_user_id,
                                 self.policies.defaults, chat.agent)
        self.pane = AgentPane(store, chat.posts, chat.answers, chat.channels, chat.agent, self.access, self.policies)
        self.router = Router(store, chat.answers, chat.people, self.conversation, self.forks, self.budgets,
                             self.attachments, self.adoption, self.bot_user_id, self.access, self.caps, self.pane,
                             self.remembering)
        self.commands = SlashCommands(store, chat.answers, chat.people, self.forks, policy, self.caps)
        self.channel_admin = ChannelAdmin(store, chat.replies, chat.answers, chat.screens, self.access,
                                          channels.defaults, channels.choices, self.connections, self.remembering)
        self.gestures = Gestures(store, chat.answers, chat.screens, chat.people, self.conversation, self.forks,
                                 self.bot_user_id, self.access, self.caps)

    def sweep(self) -> None:
        """Reminders, expiry, compaction and crash recovery; the scheduler runs it periodically."""
        self.lifecycle.sweep()

    def heartbeat(self) -> None:
        """Keep alive every claim this process holds (the scheduler runs it every third of the lease)."""
        self.liveness.beat()

    def healthy(self) -> None:
        """Raises when the store cannot be written."""
        self.store.check(self.liveness.process)

    def first_delivery(self, event_id: str) -> bool:
        """True once per Slack event id, whichever replica sees it first."""
        return self.store.claims.claim(f"event:{event_id}")

    def _after_answer(self, session: Session, usage: Usage, chosen: ChannelSettings | None) -> None:
        if usage.total >= self.policy.compact_at:
            self.compactor.compact(session.id)
        if session.fork:
            self.budgets.notify_if_reached(session.fork, chosen)
