"""Use cases, one method per thing a person does. Listeners parse Slack payloads into these calls.

Errors from the domain's tree are turned into a private answer to the person here, at the edge of
the use case; nothing else changes when one is raised.
"""
from __future__ import annotations

import logging
from dataclasses import dataclass

from ..domain.commands import mentions, parse_merge, parse_thread_command, strip_mention
from ..domain.errors import ThreadforkError
from ..domain.model import ContextReport, Fork, ForkStatus, Role, Session, TurnStatus, Usage
from ..store import Store
from .compaction import Compactor
from .conversation import Conversation, Speaker
from .forks import Forks
from .lifecycle import Lifecycle
from .policy import Policy
from .ports import Audience, Chat, Model, Place

log = logging.getLogger(__name__)

MERGE_REACTIONS = frozenset({"white_check_mark", "heavy_check_mark"})
ABANDON_REACTIONS = frozenset({"x"})
RETRY_REACTIONS = frozenset({"repeat"})

__all__ = ["Services", "IncomingMessage", "SlashCommand", "Audience", "Place", "Speaker"]


@dataclass(frozen=True)
class IncomingMessage:
    team_id: str | None
    channel_id: str
    channel_type: str | None
    user_id: str
    text: str
    ts: str
    thread_ts: str | None = None


@dataclass(frozen=True)
class SlashCommand:
    team_id: str | None
    channel_id: str
    user_id: str
    user_name: str | None
    text: str
    response_url: str | None

    @property
    def audience(self) -> Audience:
        """The caller, answered privately through the command's response_url."""
        return Audience(self.channel_id, self.user_id, response_url=self.response_url)


class Services:
    def __init__(self, store: Store, chat: Chat, model: Model, bot_user_id: str | None,
                 policy: Policy = Policy()):
        self.store = store
        self.chat = chat
        self.bot_user_id = bot_user_id
        self.policy = policy
        self.compactor = Compactor(store, model, policy)
        self.conversation = Conversation(store, chat, model, on_answered=self._after_answer, lease=policy.lease)
        self.forks = Forks(store, chat, model, self.conversation, policy)
        self.lifecycle = Lifecycle(store, chat, self.conversation, self.forks, self.compactor, policy)

    def sweep(self) -> None:
        """Reminders, expiry, compaction and crash recovery; the scheduler runs it periodically."""
        self.lifecycle.sweep()

    # messages ---------------------------------------------------------------------------

    def receive_message(self, message: IncomingMessage) -> None:
        mentioned = mentions(message.text, self.bot_user_id)
        in_thread = bool(message.thread_ts) and message.thread_ts != message.ts
        fork = self.store.fork_by_message(message.channel_id, message.thread_ts) if in_thread else None
        if fork is None and not (mentioned or message.channel_type == "im"):
            return  # ordinary channel chatter; the parent listens only when mentioned
        # `message` and `app_mention` both deliver a mention, with different event ids: one claim
        # per message, taken atomically with storing the turn (or before any other action)
        key = f"msg:{message.channel_id}:{message.ts}"
        text = strip_mention(message.text, self.bot_user_id)
        audience = Audience(message.channel_id, message.user_id, thread_ts=message.thread_ts if in_thread else None)
        foreign_thread = in_thread and message.channel_type != "im"
        try:
            if fork is not None:
                self._fork_message(fork, message, text, mentioned, audience, key)
            elif text and not foreign_thread:
                session = Session(self.store.parent_id(message.channel_id, message.team_id),
                                  message.channel_id, message.team_id)
                self.conversation.submit(session, self._speaker(message.user_id), text, message.ts, claim=key)
            elif not self.store.claim(key):
                return
            elif foreign_thread:
                self.chat.tell(audience, "Threads here are forks, and this one isn't. Mention me at the channel's "
                                         "top level, or open a fork with `/fork [topic]`.")
            else:
                self.chat.tell(audience, "I got an empty message — write your question after the mention.")
        except ThreadforkError as error:
            self.chat.tell(audience, str(error))

    def _fork_message(self, fork: Fork, message: IncomingMessage, text: str, mentioned: bool,
                      audience: Audience, key: str) -> None:
        command = parse_thread_command(text) if mentioned else None
        plain_turn = not command and fork.status is ForkStatus.OPEN and text and not self._over_budget(fork)
        if plain_turn:
            session = Session(fork.id, fork.channel_id, fork.team_id, fork)
            self.conversation.submit(session, self._speaker(message.user_id), text, message.ts, claim=key)
            return
        if not self.store.claim(key):
            return
        if command and command.verb == "merge":
            self.forks.merge(fork, message.user_id, command.guidance)
        elif command:
            self.forks.abandon(fork, message.user_id)
        elif fork.status is not ForkStatus.OPEN:
            state = "merged" if fork.status in (ForkStatus.MERGED, ForkStatus.MERGING) else "abandoned"
            self.chat.tell(audience, f"Fork {fork.label} is {state}, so I won't answer here. "
                                     "Open a new one with `/fork [topic]` at the channel's top level.")
        elif text:
            self.store.append_turn(fork.id, Role.USER, text, TurnStatus.FAILED, author_id=message.user_id,
                                   author_name=self.chat.display_name(message.user_id), slack_ts=message.ts,
                                   channel_id=fork.channel_id)
            self.chat.tell(audience, f"Fork {fork.label} has used up its token budget, so I kept your message "
                                     "without answering. Merge it, abandon it, or press *Continue* on the budget "
                                     "notice in this thread to raise the budget.")
        else:
            self.chat.tell(audience, "That message had no text, so I left it out of the fork.")

    # slash commands ---------------------------------------------------------------------

    def fork_command(self, command: SlashCommand) -> None:
        audience = command.audience
        try:
            speaker = Speaker(command.user_id, command.user_name or self.chat.display_name(command.user_id))
            result = self.forks.open(command.channel_id, command.team_id, speaker, command.text)
            if isinstance(result, str):
                self.chat.tell(audience, result)
        except ThreadforkError as error:
            self.chat.tell(audience, str(error))

    def merge_command(self, command: SlashCommand) -> None:
        audience = command.audience
        request = parse_merge(command.text)
        try:
            fork = self.forks.resolve(command.channel_id, command.user_id, request.number)
            self.forks.merge(fork, command.user_id, request.guidance)
        except ThreadforkError as error:
            self.chat.refuse_merge(audience, str(error), self.store.open_forks(command.channel_id))

    def context_command(self, command: SlashCommand) -> None:
        audience = command.audience
        parent = self.store.parent_id(command.channel_id, command.team_id)
        report = ContextReport(
            size=self.store.context_size(parent), budget=self.policy.compact_at,
            compactions=sum(1 for t in self.store.turns(parent) if t.role is Role.COMPACTION),
            merged=self.forks.listings(self.store.forks_in(command.channel_id, ForkStatus.MERGED)),
            open=self.store.open_forks(command.channel_id),
        )
        self.chat.show_context(audience, report)

    def forks_command(self, command: SlashCommand) -> None:
        audience = command.audience
        listings = self.forks.listings(self.store.open_forks(command.channel_id))
        self.chat.show_forks(audience, listings, self.store.fork_counts(command.channel_id))

    # shortcuts, edits, Home --------------------------------------------------------------

    def fork_from_message(self, team_id: str | None, channel_id: str, user_id: str, message_ts: str,
                          thread_ts: str | None, response_url: str | None) -> None:
        audience = Audience(channel_id, user_id, response_url=response_url)
        if (thread_ts and thread_ts != message_ts) or self.store.fork_by_message(channel_id, message_ts):
            self.chat.tell(audience, "“Fork from here” works on the channel's conversation, not inside a thread.")
            return
        try:
            self.forks.open(channel_id, team_id, self._speaker(user_id), "--inherit", origin_ts=message_ts)
        except ThreadforkError as error:
            self.chat.tell(audience, str(error))

    def merge_from_message(self, channel_id: str, user_id: str, message_ts: str, thread_ts: str | None,
                           response_url: str | None) -> None:
        audience = Audience(channel_id, user_id, response_url=response_url)
        fork = self.store.fork_by_message(channel_id, thread_ts or message_ts)
        if fork is None:
            self.chat.tell(audience, "“Merge this fork” works on the messages of a fork's thread.")
            return
        self._act(fork, user_id, "merge", audience)

    def edit_message(self, channel_id: str, ts: str, user_id: str, text: str) -> None:
        self.store.edit_turn(channel_id, ts, user_id, strip_mention(text, self.bot_user_id))

    def delete_message(self, channel_id: str, ts: str) -> None:
        self.store.delete_turn(channel_id, ts)

    def home_opened(self, user_id: str) -> None:
        listings = self.forks.listings(self.store.open_forks_of(user_id))
        self.chat.publish_home(user_id, listings, self.store.economy())

    # reactions and buttons --------------------------------------------------------------

    def reaction(self, channel_id: str, ts: str, user_id: str, name: str) -> None:
        base = name.split("::")[0]  # skin tones arrive as "x::skin-tone-2"
        if base in RETRY_REACTIONS:
            session_id = self.store.retry_turn(channel_id, ts)
            if session_id is not None:
                self.conversation.drain(session_id)
            return
        if base not in MERGE_REACTIONS | ABANDON_REACTIONS:
            return
        fork = self.store.fork_by_message(channel_id, ts)
        if fork is None or (base in ABANDON_REACTIONS and fork.root_ts != ts):
            return
        audience = Audience(channel_id, user_id, thread_ts=fork.root_ts)
        self._act(fork, user_id, "merge" if base in MERGE_REACTIONS else "abandon", audience)

    def button(self, fork_id: int, user_id: str, verb: str, channel_id: str) -> None:
        fork = self.store.fork(fork_id)
        audience = Audience(channel_id, user_id)
        if fork is None or fork.channel_id != channel_id:
            self.chat.tell(audience, "That fork no longer exists.")
            return
        self._act(fork, user_id, verb, audience)

    def raise_budget(self, fork_id: int, user_id: str, channel_id: str) -> None:
        fork = self.store.fork(fork_id)
        if fork is None or fork.channel_id != channel_id or not self.policy.fork_token_budget:
            self.chat.tell(Audience(channel_id, user_id), "That fork no longer has a budget to raise.")
            return
        self.store.raise_budget(fork.id, self.policy.fork_token_budget)
        _, limit = self._budget(fork)
        self.chat.note_in_thread(fork, f"<@{user_id}> raised this fork's token budget to {limit:,}. Carry on — "
                                       "react 🔁 to a message I didn't answer to get its answer now.")

    def _after_answer(self, session: Session, usage: Usage) -> None:
        if usage.total >= self.policy.compact_at:
            self.compactor.compact(session.id)
        fork = session.fork
        if fork and self.policy.fork_token_budget:
            burned, limit = self._budget(fork)
            if burned >= limit and self.store.claim(f"budget:{fork.id}:{limit}"):
                self.chat.budget_reached(fork, burned, limit)

    def _over_budget(self, fork: Fork) -> bool:
        if not self.policy.fork_token_budget:
            return False
        burned, limit = self._budget(fork)
        return burned >= limit

    def _budget(self, fork: Fork) -> tuple[int, int]:
        """Tokens the fork has burned, and its budget as raised by Continue so far."""
        limit = self.policy.fork_token_budget + self.store.budget_extra(fork.id)
        return self.store.stats(fork.id).burned.total, limit

    def _act(self, fork: Fork, user_id: str, verb: str, audience: Audience) -> None:
        try:
            if verb == "merge":
                self.forks.merge(fork, user_id)
            else:
                self.forks.abandon(fork, user_id)
        except ThreadforkError as error:
            self.chat.tell(audience, str(error))

    def _speaker(self, user_id: str) -> Speaker:
        return Speaker(user_id, self.chat.display_name(user_id))
