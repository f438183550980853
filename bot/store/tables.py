"""Table definitions. Sessions hold both parents and forks; a fork points at its parent.

The installation and OAuth state tables are slack-sdk's own (its SQLAlchemy stores define them and
read and write them; migration 0006 creates them as defined): they are listed here so the one schema
is complete, never to be written by Threadfork's code."""
from slack_sdk.oauth.installation_store.sqlalchemy import SQLAlchemyInstallationStore
from slack_sdk.oauth.state_store.sqlalchemy import SQLAlchemyOAuthStateStore
from sqlalchemy import (
    BigInteger,
    Boolean,
    Column,
    DateTime,
    Float,
    ForeignKey,
    Index,
    Integer,
    MetaData,
    String,
    Table,
    Text,
    UniqueConstraint,
)

metadata = MetaData()

sessions = Table(
    "sessions",
    metadata,
    Column("id", Integer, primary_key=True, autoincrement=True),
    Column("kind", String(8), nullable=False),  # parent | fork
    Column("channel_id", String(32), nullable=False),
    Column("team_id", String(32), nullable=False, server_default=""),  # "" when Slack did not say
    # one parent per channel of a workspace ("team:channel"): set for parents only (NULLs never collide)
    Column("parent_key", String(80), unique=True),
    Column("parent_id", Integer, ForeignKey("sessions.id")),
    Column("number", Integer),
    Column("mode", String(8)),
    Column("topic", Text, nullable=False, default=""),
    Column("owner_id", String(32)),
    Column("fork_point_seq", Integer),
    Column("inherited_turns", Integer, nullable=False, default=0),
    Column("inherited_tokens", BigInteger, nullable=False, default=0),
    Column("status", String(12), nullable=False, default="open"),
    Column("root_ts", String(32)),
    Column("origin_ts", String(32)),  # the message "Fork from here" was used on
    Column("depth", Integer, nullable=False, default=1),  # 1: forked from the channel; 2: from a fork; …
    Column("parent_number", Integer),  # a nested fork's parent fork, as shown (both never change)
    Column("parent_root_ts", String(32)),
    Column("opened_at_seq", Integer),  # the parent's last seq when the fork opened (conflicts look after it)
    Column("adopted", Boolean, nullable=False, default=False),  # a thread people began, not a fork root we posted
    # the summary under review (THREADFORK_MERGE_REVIEW): one live draft per fork, numbered per fork
    Column("draft_number", Integer, nullable=False, default=0),
    Column("draft_text", Text),  # NULL: no live draft
    Column("draft_seq", Integer),  # the fork's last seq it summarised: a later turn makes it stale
    Column("draft_ts", String(32)),
    Column("draft_by", String(32)),
    Column("draft_input_tokens", BigInteger),
    Column("draft_output_tokens", BigInteger),
    Column("summary_edited_by", String(32)),  # who edited the merged summary before approving it
    # a fork's snapshot of its channel's settings at its fork point: instructions, model, tools (NULL: default)
    Column("instructions", Text),
    Column("model", String(100)),
    Column("tools", String(64)),  # comma list; "" = no tools
    Column("connectors", Text),  # JSON [{name, url, allowed_tools}] (never a token); NULL: none
    Column("effort", String(8)),  # low | medium | high | default; NULL: opened before it was kept
    Column("merged_by", String(32)),
    Column("merge_owner", String(64)),  # who is merging or announcing; renews merge_until while alive
    Column("merge_until", DateTime()),  # expired = its worker died, the merge is stuck
    Column("merge_attempts", Integer, nullable=False, default=0),
    Column("merge_guidance", Text),  # what the person asked the summary to focus on, for whoever writes it
    Column("summary", Text),  # the raw summary, kept until it has been posted
    Column("summary_tokens", Integer),
    Column("summary_ts", String(32)),
    Column("reminded_at", DateTime()),
    Column("closed_at", DateTime()),  # merged or abandoned then: retention counts from it
    Column("budget_extra", BigInteger, nullable=False, default=0),  # raised by "Continue"
    Column("next_seq", Integer, nullable=False, default=0),
    Column("version", Integer, nullable=False, default=0),  # bumped when a stored turn changes or is removed
    # the retention policy removed this session's turns below this seq (0: none); its context says so
    Column("pruned_before_seq", Integer, nullable=False, default=0),
    # a private fork (the agent pane): the channel whose parent it forks; its thread (channel_id) is a DM
    Column("private_of", String(32)),
    Column("next_fork_number", Integer, nullable=False, default=0),
    Column("lease_owner", String(64)),
    Column("lease_until", DateTime()),
    Column("created_at", DateTime(), nullable=False),
    Column("last_activity_at", DateTime(), nullable=False),
    UniqueConstraint("team_id", "channel_id", "number", name="uq_fork_number"),
    # ids are never reused once deleted (SQLite would reuse the highest): an old fork's buttons in Slack,
    # caches keyed by session id and markers must never find a new session under an erased one's id
    sqlite_autoincrement=True,
)

turns = Table(
    "turns",
    metadata,
    Column("id", Integer, primary_key=True, autoincrement=True),
    Column("session_id", Integer, ForeignKey("sessions.id"), nullable=False),
    Column("seq", Integer, nullable=False),
    Column("role", String(12), nullable=False),
    Column("text", Text, nullable=False),
    Column("author_id", String(32)),
    Column("author_name", String(255)),
    Column("status", String(12), nullable=False),
    Column("slack_ts", String(32)),
    Column("source_fork_id", Integer, ForeignKey("sessions.id")),
    Column("covers_seq", Integer),  # a compaction turn replaces the turns up to this seq
    Column("input_tokens", BigInteger, nullable=False, default=0),
    Column("output_tokens", BigInteger, nullable=False, default=0),
    Column("cache_read_tokens", BigInteger, nullable=False, default=0),
    Column("cache_write_tokens", BigInteger, nullable=False, default=0),
    Column("deleted", Boolean, nullable=False, default=False),
    Column("attempts", Integer, nullable=False, default=0),  # answers begun for this user turn
    Column("has_files", Boolean, nullable=False, default=False),  # attachments rows exist for it
    Column("searches", Integer, nullable=False, default=0),  # web searches and fetches by Claude's server tools
    Column("fetches", Integer, nullable=False, default=0),
    Column("cache_write_1h_tokens", BigInteger, nullable=False, default=0),  # of cache_write_tokens
    # the answer's estimated cost from its reported usage (bot/domain/spend.py), in micro-dollars
    Column("cost_micros", BigInteger, nullable=False, default=0),
    Column("uncached_micros", BigInteger, nullable=False, default=0),  # what it would have cost uncached
    Column("unpriced", Integer, nullable=False, default=0),  # calls by a model the price table lacks
    # who pressed Stop on this answer: set once, only while it streams (a request its writer obeys), and
    # kept with the answer it stopped
    Column("stopped_by", String(32)),
    Column("stop_reason", String(32)),  # an answer's stop reason, as the API gave it
    Column("created_at", DateTime(), nullable=False),
    # a reply's worst case set aside on its channel's day (bot/store/channels.py), until it is given back once
    Column("reserved_micros", BigInteger, nullable=False, default=0, server_default="0"),
    Column("reserved_day", String(10)),
    UniqueConstraint("session_id", "seq", name="uq_turn_seq"),
)
Index("ix_turns_pending", turns.c.session_id, turns.c.status, turns.c.seq)  # pending turns, in order
Index("ix_turns_slack_ts", turns.c.slack_ts)  # edits, deletions and retries find a turn by its message
Index("ix_turns_created", turns.c.created_at)  # the retention sweep finds old turns without a full scan
Index("ix_sessions_channel", sessions.c.channel_id, sessions.c.team_id, sessions.c.kind, sessions.c.status)
Index("ix_sessions_private", sessions.c.team_id, sessions.c.private_of)  # a channel's private forks

# every Slack message that belongs to a fork (root, replies, user messages) → its session,
# because reaction_added carries only channel + ts (and the workspace, in its envelope)
messages = Table(
    "messages",
    metadata,
    Column("team_id", String(32), primary_key=True),
    Column("channel_id", String(32), primary_key=True),
    Column("ts", String(32), primary_key=True),
    Column("session_id", Integer, ForeignKey("sessions.id"), nullable=False),
)

# idempotency keys: Slack event ids and (channel, ts) of messages already taken; pruned after a day
claims = Table(
    "claims",
    metadata,
    Column("key", String(128), primary_key=True),
    Column("created_at", DateTime(), nullable=False),
)
Index("ix_claims_created", claims.c.created_at)

# things that happen once ever (a budget notice per limit, a compaction per point): never pruned
markers = Table(
    "markers",
    metadata,
    Column("key", String(128), primary_key=True),
    Column("created_at", DateTime(), nullable=False),
)

# what Slack delivered and the bot acknowledged, recorded before the ack: processed, or replayed by
# a sweep once its processing claim expires; once done its payload is cleared and its key kept a day,
# to turn away redeliveries
inbox = Table(
    "inbox",
    metadata,
    Column("key", String(160), primary_key=True),  # event id, or the trigger id of a command or action
    Column("payload", Text),  # the parsed request body, as JSON; NULL once done (people's words go)
    Column("received_at", DateTime(), nullable=False),
    Column("claimed_until", DateTime()),  # its processing claim, renewed while someone works on it
    Column("attempts", Integer, nullable=False, default=0),
    Column("done_at", DateTime()),
)
Index("ix_inbox_open", inbox.c.done_at, inbox.c.claimed_until)

# one row per process: /healthz writes it, so health means "can be written", not only "answers"
health = Table(
    "health",
    metadata,
    Column("process", String(64), primary_key=True),
    Column("checked_at", DateTime(), nullable=False),
)

# a file's content, once per content (sha256): an image or PDF as its Files API id, a text file's text
files = Table(
    "files",
    metadata,
    Column("sha256", String(64), primary_key=True),
    Column("kind", String(12), nullable=False),
    Column("media_type", String(100), nullable=False),
    Column("size", BigInteger, nullable=False),
    Column("file_id", String(100)),
    Column("text", Text),
    Column("created_at", DateTime(), nullable=False),
)

# the files shared with a turn, in order; a file deleted in Slack is marked, never sent again
attachments = Table(
    "attachments",
    metadata,
    Column("id", Integer, primary_key=True, autoincrement=True),
    Column("turn_id", Integer, ForeignKey("turns.id"), nullable=False),
    Column("position", Integer, nullable=False),
    Column("sha256", String(64), ForeignKey("files.sha256"), nullable=False),
    Column("name", String(255), nullable=False),
    Column("slack_file_id", String(32), nullable=False),
    Column("deleted", Boolean, nullable=False, default=False),
)
Index("ix_attachments_turn", attachments.c.turn_id)
Index("ix_attachments_slack_file", attachments.c.slack_file_id)

# 👍/👎 on an answer or a summary: the first press of each person on each message counts
feedback = Table(
    "feedback",
    metadata,
    Column("team_id", String(32), primary_key=True),
    Column("channel_id", String(32), primary_key=True),
    Column("message_ts", String(32), primary_key=True),
    Column("user_id", String(32), primary_key=True),
    Column("value", String(8), nullable=False),  # good | bad
    Column("created_at", DateTime(), nullable=False),
)

# what a channel's admins chose in /threadfork; NULL = the environment's default
channel_settings = Table(
    "channel_settings",
    metadata,
    Column("team_id", String(32), primary_key=True),
    Column("channel_id", String(32), primary_key=True),
    Column("instructions", Text),
    Column("model", String(100)),
    Column("fork_token_budget", BigInteger),
    Column("merge_policy", String(8)),
    Column("enabled", Boolean),
    Column("idle_reminder", Float),
    Column("expiry", Float),
    Column("tools", String(64)),  # comma list; "" = no tools
    Column("merge_review", Boolean),
    Column("connectors_chosen", Boolean),  # NULL: THREADFORK_CONNECTORS; true: the `connectors` rows (maybe none)
    Column("monthly_spend_cap_usd", Float),  # 0: no cap here
    Column("effort", String(8)),  # low | medium | high | default (the API's)
    Column("memory_budget", BigInteger),  # tokens; 0: no budget
    Column("memory_writers", String(8)),  # anyone | admins
    Column("memory_tool", String(8)),  # off | ask | on
    Column("updated_by", String(32)),
    Column("updated_at", DateTime(), nullable=False),
)

# each channel's estimated spend per UTC day, from reported usage (bot/domain/spend.py), added in the
# transaction that records each answer, summary, draft and compaction; a month is the sum of its days
spend = Table(
    "spend",
    metadata,
    Column("team_id", String(32), primary_key=True),
    Column("channel_id", String(32), primary_key=True),
    Column("day", String(10), primary_key=True),  # YYYY-MM-DD
    Column("cost_micros", BigInteger, nullable=False, default=0),
    Column("fork_micros", BigInteger, nullable=False, default=0),  # the part spent in forks and their merges
    Column("uncached_micros", BigInteger, nullable=False, default=0),  # the same calls without the cache
    Column("unpriced", Integer, nullable=False, default=0),  # calls by a model the price table lacks
    # the worst cases of the answers being written now, set aside against the cap until each is recorded
    Column("reserved_micros", BigInteger, nullable=False, default=0, server_default="0"),
)

# a channel's own MCP connectors, in the order its settings show them; the token is Fernet-sealed
# (bot/secrets), never plain text, and goes with its row
connectors = Table(
    "connectors",
    metadata,
    Column("team_id", String(32), primary_key=True),
    Column("channel_id", String(32), primary_key=True),
    Column("name", String(64), primary_key=True),
    Column("position", Integer, nullable=False),
    Column("url", Text, nullable=False),
    Column("allowed_tools", Text),  # comma list; NULL: every tool
    Column("sealed_token", Text),
)

# MCP tool calls Claude made through each connector, per fork (number 0: the channel's conversation)
connector_calls = Table(
    "connector_calls",
    metadata,
    Column("team_id", String(32), primary_key=True),
    Column("channel_id", String(32), primary_key=True),
    Column("fork_number", Integer, primary_key=True),
    Column("connector", String(64), primary_key=True),
    Column("calls", Integer, nullable=False),
)

# memory (bot/domain/memory.py): a channel's (a DM's) short lasting entries, and a workspace's (channel_id "");
# an entry of a private fork is its owner's own (owner_id) until merged. Deleted for real: forget, uninstall
memory_entries = Table(
    "memory_entries",
    metadata,
    Column("id", Integer, primary_key=True, autoincrement=True),
    Column("team_id", String(32), nullable=False),
    Column("channel_id", String(32), nullable=False),
    Column("owner_id", String(32)),
    Column("text", Text, nullable=False),
    Column("author_id", String(32), nullable=False),
    Column("author_name", String(255)),
    Column("source_fork", Integer),  # the fork's number, shown and linked (the number never names another fork)
    Column("source_ts", String(32)),  # that fork's root message
    Column("path", String(255)),  # the memory tool's file name; NULL: one made of the id
    Column("pending", Boolean, nullable=False, default=False),  # Claude's write waiting for Keep (ask first)
    Column("created_at", DateTime(), nullable=False),
    Index("ix_memory_entries_channel", "team_id", "channel_id"),
    sqlite_autoincrement=True,  # an old Undo button must never find a newer entry under a deleted one's id
)

# the channel each person was last seen viewing while the bot's agent pane was open (app_context_changed);
# NULL: none (a DM, a canvas, nothing)
agent_contexts = Table(
    "agent_contexts",
    metadata,
    Column("team_id", String(32), primary_key=True),
    Column("user_id", String(32), primary_key=True),
    Column("channel_id", String(32)),
    Column("changed_at", DateTime(), nullable=False),
    Column("seen_at", String(24)),  # the event's ts (domain.agent.in_order): an older event changes nothing
)

# a workspace that uninstalled the app (or revoked its bot token); its conversations are deleted
# THREADFORK_RETENTION_AFTER_UNINSTALL later, unless it installs again first
departures = Table(
    "departures",
    metadata,
    Column("team_id", String(32), primary_key=True),
    Column("departed_at", DateTime, nullable=False),
)

INSTALLATIONS_TABLE = SQLAlchemyInstallationStore.default_installations_table_name  # slack_installations
BOTS_TABLE = SQLAlchemyInstallationStore.default_bots_table_name  # slack_bots
OAUTH_STATES_TABLE = SQLAlchemyOAuthStateStore.default_table_name  # slack_oauth_states
SQLAlchemyInstallationStore.build_installations_table(metadata, INSTALLATIONS_TABLE)
SQLAlchemyInstallationStore.build_bots_table(metadata, BOTS_TABLE)
SQLAlchemyOAuthStateStore.build_oauth_states_table(metadata, OAUTH_STATES_TABLE)
