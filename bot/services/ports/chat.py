"""Slack, as the use cases see it: one narrow protocol per concern, bundled in `Chat`.

- `Replies`: answers in a place, streamed as Claude writes them, and plain notices there;
- `ForkPosts`: a fork's public messages — its root, notes in its thread, its merged summary, drafts
  of that summary under review, reminders, its budget running out;
- `PrivateAnswers`: what one person sees (ephemeral messages, the response_url of their command or button);
- `Screens`: views and modals — settings, the draft editor, redraft guidance, App Home;
- `People`: who someone is — their name, their admin rights;
- `Shared`: what people shared — a file's bytes, a thread's messages;
- `AgentSessions`: Slack's agent platform — each fork's thread as an agent session (title, status), and
  the suggested prompts of the bot's DM; best effort: it never raises and never makes its caller wait;
- `Channels`: who is in a channel, and its name;
- `MemoryNotes`: memory's messages and modal — the "remembered" note with its Undo (or Keep / Undo) buttons,
  and `/threadfork memory`'s list of entries with edit and delete.
A service takes the ports it uses, named for the concern; a new kind of message touches its port, its
adapter (bot/slack/gateway.py) and its renderer. The Slack adapter may implement them all at once.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Protocol

from ...domain.agent import Prompt, SessionStatus
from ...domain.memory import MemoryEntry
from ...domain.model import Channel, ChannelEconomy, ContextReport, Draft, Fork, ForkListing, ForkStats, ForkStatus
from ...domain.settings import ChannelSettings, Choices
from ...domain.spend import Spent
from .outside import ReplyWriter, StopSignal
from .values import Audience, Membership, Place, SharedFile, ThreadMessage


class Replies(Protocol):
    def begin_reply(self, place: Place, stop: StopSignal | None = None) -> ReplyWriter:
        """`stop`: the answer's Stop, asked before more of it streams."""
    def post_notice(self, place: Place, text: str) -> None: ...


class ForkPosts(Protocol):
    def post_fork_root(self, fork: Fork) -> str: ...
    def refresh_fork_root(self, fork: Fork) -> None: ...
    def post_merge(self, fork: Fork, stats: ForkStats, summary: str) -> str: ...
    def note_in_thread(self, fork: Fork, text: str) -> None: ...
    def post_draft(self, fork: Fork, draft: Draft, guidance: str) -> str:
        """A summary under review, in the fork's thread, with its Merge as is / Edit / Redraft / Cancel buttons."""
    def close_draft(self, fork: Fork, draft: Draft, outcome: str) -> None:
        """The draft's message without its buttons, saying what became of it."""
    def remind(self, fork: Fork, expiry_policy: str, expiry_seconds: float) -> None:
        """`expiry_policy`: what its expiry will do — `merge`, `abandon`, or `draft` (under review)."""
    def budget_reached(self, fork: Fork, burned: int, limit: int) -> None: ...
    def post_private_intro(self, fork: Fork, channel_name: str | None) -> None:
        """A private fork's first note in its DM thread: whose it is, what stays private, and its Merge into
        #channel and Abandon buttons."""


class PrivateAnswers(Protocol):
    def tell(self, audience: Audience, text: str) -> None: ...
    def refuse_merge(self, audience: Audience, reason: str, open_forks: list[Fork]) -> None: ...
    def refuse_with_children(self, audience: Audience, reason: str, children: list[Fork]) -> None:
        """A fork can't close while its own forks are open: say so, with each one's Merge/Abandon buttons."""
    def show_context(self, audience: Audience, report: ContextReport) -> None: ...
    def show_forks(self, audience: Audience, listings: list[ForkListing], counts: dict[ForkStatus, int]) -> None: ...
    def ask_to_forget(self, audience: Audience, answer: str) -> None:
        """A private question whose confirming button carries `answer`, a one-time value."""
    def settle_question(self, audience: Audience, text: str) -> None:
        """The private question a button was pressed on, replaced by `text` (its buttons gone)."""


class Screens(Protocol):
    def open_settings(self, team_id: str, trigger_id: str, channel_id: str, effective: ChannelSettings,
                      defaults: ChannelSettings, choices: Choices, with_token: frozenset[str] = frozenset()) -> None:
        """The channel's settings modal, showing the values in effect (the defaults where none was chosen);
        `with_token`: the connectors that have a token (said, never shown)."""
    def open_draft_editor(self, team_id: str, trigger_id: str, fork: Fork, draft: Draft) -> None: ...
    def ask_redraft_guidance(self, team_id: str, trigger_id: str, fork: Fork, draft: Draft) -> None: ...
    def publish_home(self, team_id: str, user_id: str, listings: list[ForkListing],
                     economy: list[ChannelEconomy], spend: dict[str, Spent] | None = None,
                     memory: dict[str, int] | None = None) -> None:
        """`spend`: this month's estimated spend by channel id, for a workspace admin (None: not shown); `memory`:
        each channel's memory size in tokens (the workspace's under "")."""


class People(Protocol):
    def display_name(self, team_id: str, user_id: str) -> str | None: ...
    def is_admin(self, team_id: str, user_id: str) -> bool:
        """A workspace admin or owner, as users.info says now; raises ChatUnavailable when Slack won't say."""


class Shared(Protocol):
    def download(self, file: SharedFile) -> bytes:
        """The file's bytes, with its workspace's bot token; raises ChatUnavailable when Slack will not give them."""
    def thread_messages(self, channel: Channel, thread_ts: str, before: str | None = None) -> list[ThreadMessage]:
        """Every message of the thread (those written before `before`, if given), its root first
        (conversations.replies, all pages, each waiting out Slack's rate limit); raises ChatUnavailable when
        Slack will not give the first page. Only an adoption reads a thread."""


class AgentSessions(Protocol):
    """Best effort: a call Slack refuses (an older plan, a missing scope) changes nothing else."""

    def session_opened(self, fork: Fork, title: str) -> None:
        """The fork's thread becomes an agent session: its title, its opener as initiator, `active`."""
    def session_status(self, fork: Fork, status: SessionStatus) -> None: ...
    def session_renamed(self, fork: Fork, title: str) -> None: ...
    def suggest_prompts(self, team_id: str, dm_channel_id: str, prompts: list[Prompt]) -> None:
        """The prompts the bot's DM suggests (1 to 4)."""


class Channels(Protocol):
    def membership(self, channel: Channel, user_id: str) -> Membership:
        """Whether the bot and the person are members of the channel; raises ChatUnavailable when Slack won't say."""
    def channel_name(self, channel: Channel) -> str | None:
        """Its name as Slack shows it to the bot (None when it can't see it)."""


class MemoryNotes(Protocol):
    def post_remembered(self, place: Place, text: str, entry_id: int, ask: bool) -> str:
        """The short note about a new entry where it was said, with its Undo button (`ask`: Keep and Undo)."""
    def settle_remembered(self, channel: Channel, ts: str, text: str) -> None:
        """The note without its buttons, saying what became of the entry."""
    def open_memory(self, team_id: str, trigger_id: str, channel: Channel, entries: list[MemoryEntry],
                    budget: int) -> None:
        """`/threadfork memory`: the entries (who, when, from which fork) with Edit and Delete."""
    def refresh_memory(self, team_id: str, view_id: str, channel: Channel, entries: list[MemoryEntry],
                       budget: int) -> None: ...
    def open_memory_editor(self, team_id: str, trigger_id: str, entry: MemoryEntry) -> None:
        """One entry's text in a modal pushed over the list, to edit."""


CHAT_PORTS = (Replies, ForkPosts, PrivateAnswers, Screens, People, Shared, AgentSessions, Channels, MemoryNotes)


@dataclass(frozen=True)
class Chat:
    replies: Replies
    posts: ForkPosts
    answers: PrivateAnswers
    screens: Screens
    people: People
    shared: Shared
    agent: AgentSessions
    channels: Channels
    memory: MemoryNotes

    @classmethod
    def all_in(cls, adapter: Any) -> Chat:
        """One adapter that implements every port (the Slack gateway, the recording one) in every place."""
        return cls(*[adapter] * len(CHAT_PORTS))
