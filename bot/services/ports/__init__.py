"""What the use cases need from the outside world, as protocols the adapters implement.

The store is split by concern, one protocol each, bundled in `Store`:
- `Claims`: once-only keys — claims (a message's channel + ts…) kept a day, markers (one-off notices) forever;
- `Inbox`: what Slack delivered, recorded before it is acknowledged, until it has been processed;
- `Sessions`: channel parents and forks, found by id, number or any Slack message of a fork; threads
  adopted as forks;
- `TurnQueue`: a session's turns — submit, the lease holder's next batch, its reply or failure,
  edits, deletions and retries;
- `Merges`: the fork state machine, open → merging → merged (or open → abandoned);
- `Reviews`: a fork's summary drafts waiting for approval, one live at a time;
- `Upkeep`: what the sweep looks for — idle forks, stalled sessions, sessions to compact;
- `Views`: read-only figures — a fork's stats, a context's size, the token economy;
- `ChannelSettingsStore`: what each channel's admins chose in `/threadfork`;
- `Files`: shared files' contents, once each, and files deleted in Slack; `Feedback`: 👍/👎 per person;
- `Erasure`: real deletes — a channel's or a workspace's conversations, and the retention policy;
- `Departures`: workspaces that uninstalled the app, until their conversations are deleted.
Every move that must happen once (a claim, a lease, a state change) is atomic in every
implementation: its result says whether this caller won. The SQL store (bot/store) and the
in-memory one the unit tests use pass the same contract tests.
"""
from .outside import Chat, Model, ReplyEvents, ReplyWriter
from .store import (
    ChannelSettingsStore,
    Claims,
    Departures,
    Erasure,
    Feedback,
    Files,
    Inbox,
    Merges,
    Reviews,
    Sessions,
    Store,
    TurnQueue,
    Upkeep,
    Views,
)
from .values import (
    MAX_ATTEMPTS,
    Adopted,
    Audience,
    Batch,
    BotUsers,
    Clock,
    Completion,
    Kept,
    Place,
    SharedFile,
    Source,
    StoredFile,
    Submitted,
    ThreadMessage,
)

__all__ = ["MAX_ATTEMPTS", "Adopted", "Audience", "Batch", "BotUsers", "ChannelSettingsStore", "Chat", "Claims",
           "Clock", "Completion", "Departures", "Erasure", "Feedback", "Files", "Inbox", "Kept", "Merges", "Model",
           "Place", "ReplyEvents", "ReplyWriter", "Reviews", "Sessions", "SharedFile", "Source", "Store",
           "StoredFile", "Submitted", "ThreadMessage", "TurnQueue", "Upkeep", "Views"]
