"""What the use cases need from the outside world, as protocols the adapters implement.

The store is split by concern, one protocol each (store.py: conversations; kept.py: what a channel keeps
beside them), bundled in `Store`:
- `Claims`: once-only keys — claims (a message's channel + ts…) kept a day, markers (one-off notices) forever;
- `Inbox`: what Slack delivered, recorded before it is acknowledged, until it has been processed;
- `Sessions`: channel parents and forks, created and found by id, number or any Slack message of a fork;
  `Adoptions`: threads adopted as forks; `PrivateForks`: forks of a channel living in a person's DM;
  `ForkBudgets`: what a fork's owner added to its budget;
- `TurnQueue`: a session's turns, loaded and saved (the queue's use cases: services/queue.py); `Leases`: who
  answers in a session;
  `TurnEdits`: people's edits and deletions, and retries; `Stops`: Stop pressed on an answer streaming;
- `Merges`: the fork state machine, open → merging → merged (or open → abandoned);
- `Reviews`: a fork's summary drafts waiting for approval, one live at a time;
- `Upkeep`: what the sweep looks for — idle forks, stalled sessions, sessions to compact;
- `Views`: read-only figures — a fork's stats, a context's size, the token economy;
- `ChannelSettingsStore`: what each channel's admins chose in `/threadfork`; `ConnectorTokens`: their
  connectors' tokens, sealed; `ConnectorUse`: their calls per fork; `Spending`: each channel's estimated
  spend per day, added as each answer is recorded, and read with its settings when a cap applies;
- `Files`: shared files' contents, once each, and files deleted in Slack; `Feedback`: 👍/👎 per person;
- `Erasure`: real deletes — a channel's or a workspace's conversations, and the retention policy;
- `Departures`: workspaces that uninstalled the app, until their conversations are deleted;
- `Memories`: channels', DMs' and workspaces' memory entries (bot/domain/memory.py);
- `Pane`: the channel each person views while the bot's agent pane is open.
`Work` is the unit of work: a use case's saves in `with work():` stand or fall together.
Every move that must happen once (a claim, a lease, a state change) is atomic in every
implementation: its result says whether this caller won. The SQL store (bot/store) and the
in-memory one the unit tests use pass the same contract tests.

Slack is split the same way (chat.py), bundled in `Chat`: `Replies`, `ForkPosts`, `PrivateAnswers`,
`Screens`, `People`, `Shared`, `AgentSessions`, `Channels`, `MemoryNotes`. Claude is `Model` (outside.py); `Secrets` seals connectors' tokens. No protocol here has more than 12
methods: a service takes the few it uses.
"""
from .chat import (CHAT_PORTS, AgentSessions, Channels, Chat, ForkPosts, MemoryNotes, People, PrivateAnswers, Replies,
                   Screens, Shared)
from .outside import Later, Model, ReplyEvents, ReplyWriter, Secrets, StopSignal
from .kept import (
    ChannelSettingsStore,
    ConnectorTokens,
    ConnectorUse,
    Departures,
    Erasure,
    Feedback,
    Files,
    Memories,
    Spending,
)
from .store import (
    Adoptions,
    Claims,
    ForkBudgets,
    Inbox,
    Leases,
    Merges,
    Pane,
    PrivateForks,
    Reviews,
    Sessions,
    Stops,
    Store,
    TurnEdits,
    TurnQueue,
    Upkeep,
    Views,
    Work,
)
from .values import (
    MAX_ATTEMPTS,
    Adopted,
    Audience,
    Batch,
    BotUsers,
    Clock,
    Completion,
    Held,
    Kept,
    Membership,
    Opener,
    Place,
    SharedFile,
    Source,
    Standing,
    StoredFile,
    Submitted,
    ThreadMessage,
)

__all__ = ["Adopted", "Adoptions", "AgentSessions", "Audience", "Batch", "BotUsers", "CHAT_PORTS", "ChannelSettingsStore", "Channels", "Chat",
           "Claims", "Clock", "ConnectorTokens", "ConnectorUse", "Completion", "Departures", "Erasure", "Feedback", "Files", "ForkBudgets",
           "ForkPosts", "Inbox", "Kept", "Later", "Memories", "MemoryNotes", "MAX_ATTEMPTS", "Membership", "Merges", "Model", "Opener", "Pane", "People", "Place", "PrivateForks",
           "PrivateAnswers", "Replies", "ReplyEvents", "ReplyWriter", "Reviews", "Screens", "Secrets", "Sessions",
           "Shared", "SharedFile", "Source", "Spending", "Standing", "StopSignal", "Stops", "Store", "StoredFile", "Submitted",
           "ThreadMessage", "TurnEdits",
           "TurnQueue", "Upkeep", "Views", "Work", "Held", "Leases"]
