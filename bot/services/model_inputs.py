"""A session's model input, read out of the store: the fork pointers are resolved here.

Memory (bot/domain/memory.py) is read with it, one query, and goes into the `system` content as data: the
channel's conversation carries its memory as it is now — or, on a model that takes mid-conversation system
messages, as it was when its prefix began, and what was saved since in one system message after the last user
message; a fork carries the memory saved before it opened (its prefix stays byte-stable; an inheriting fork on
such a model: its parent's prefix's) and what was saved since in a note after its cached prefix.

Which MCP connectors a request names, and their tokens, read as the request is made.

A channel's connectors are its own choice, or THREADFORK_CONNECTORS where it made none; a fork uses the
ones it snapshotted when it opened. A token is the channel's own (sealed in the store, opened here), or,
for a default connector the channel kept as configured (same name and URL), the environment's. Tokens
are read at every request, so a rotated one takes effect at once, and live only in the request.

The tools a request offers beside the server tools: MCP connectors (`Connections`), and Claude's memory tool
(`MemoryTools`) in a channel that allows it (its `memory_tool` setting: off, ask, on): the request offers
`memory_20250818`, and each command Claude sends during the answer is performed on the channel's memory (a
private fork's: its owner's own) and answered within the same turn — no extra model call of ours.

Claude's writes go through Remembering.write (remembering.py): each new entry shows the channel the same
"remembered" note as a person's `remember` (with "ask", Keep and Undo: the entry is seen by no request until
someone keeps it). The budget holds for Claude as for people: an entry past it is refused in the tool_result,
which says why.
"""
from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, replace
from typing import TYPE_CHECKING

from ..domain import memory
from ..domain.caching import CacheMode
from ..domain.connectors import Connector
from ..domain.context import Block, ModelInput, asking, fork_input, parent_input
from ..domain.memory_files import Change, ToolError, perform
from ..domain.model import Channel, Fork, Mode, Session, Turn
from ..domain.settings import ChannelSettings
from ..domain.spend import takes_system_messages
from .ports import ChannelSettingsStore, ConnectorTokens, Memories, Secrets, Sessions, TurnQueue

if TYPE_CHECKING:
    from .remembering import Remembering

CLAUDE = "Claude"  # the author name of what Claude remembers (its author id: the person it was answering)


class Connections:
    def __init__(self, tokens: ConnectorTokens, secrets: Secrets | None, defaults: tuple[Connector, ...] = (),
                 default_tokens: Mapping[str, str] | None = None):
        self.tokens = tokens
        self.secrets = secrets
        self.defaults = defaults
        self._default_tokens = {c.name: (c.url, (default_tokens or {}).get(c.name)) for c in defaults}

    def of_channel(self, chosen: ChannelSettings) -> tuple[Connector, ...]:
        """The connectors a channel's settings (its own choices) give its parent session."""
        return chosen.connectors if chosen.connectors is not None else self.defaults

    def has_default_token(self, connector: Connector) -> bool:
        url, token = self._default_tokens.get(connector.name, (None, None))
        return bool(token) and url == connector.url

    def attach(self, model_input: ModelInput, channel: Channel) -> ModelInput:
        """`model_input` with its connectors' tokens, read now."""
        if not model_input.connectors:
            return model_input
        sealed = self.tokens.sealed(channel)
        tokens = {}
        for connector in model_input.connectors:
            if connector.name in sealed:
                token = self.secrets.open(sealed[connector.name]) if self.secrets else None
            else:
                url, token = self._default_tokens.get(connector.name, (None, None))
                token = token if url == connector.url else None
            if token:
                tokens[connector.name] = token
        return replace(model_input, tokens=tokens)


class ModelInputs:
    """Reads what a request is made of: the fork chain (sessions), its turns, the channel's settings and memory."""

    def __init__(self, *, sessions: Sessions, turns: TurnQueue, channel_settings: ChannelSettingsStore,
                 memories: Memories, default_model: str | None = None):
        self.sessions, self.turns, self.channel_settings = sessions, turns, channel_settings
        self.memories = memories
        self.default_model = default_model  # THREADFORK_MODEL: the model of a channel that chose none

    def of_session(self, session: Session, history: list[Turn] | None = None, chosen: ChannelSettings | None = None,
                   connections: Connections | None = None, cache: CacheMode = CacheMode.AUTO,
                   remembered: list[memory.MemoryEntry] | None = None) -> ModelInput:
        """The input that asks for the session's next answer. `history`: the session's own turns, `chosen`: its
        channel's settings, and `remembered`: a channel conversation's memory, when the caller has just read them;
        `connections`: its MCP connectors' (none without); `cache`: how breakpoints' TTLs are chosen
        (THREADFORK_CACHE_TTL)."""
        if session.fork is None:
            chosen = self.channel_settings.of(session.channel) if chosen is None else chosen
            history = self.turns.turns(session.id) if history is None else history
            base = parent_input(history, session.pruned, cache)
            connectors = connections.of_channel(chosen) if connections else ()
            configured = base.configured(chosen.instructions, chosen.model, chosen.tools, connectors)
            before, since = self._parent_memory(session, history, chosen.model or self.default_model, remembered)
            asked = replace(asking(replace(configured, system=memory.with_memory(configured.system, before))),
                            effort=chosen.effort, late_system=memory.note(since))
            return connections.attach(asked, session.channel) if connections else asked
        # a fork keeps its fork point's effort, as its other settings (invariant 9); one opened before effort
        # was kept answers at its channel's effort as it is now
        effort = session.fork.effort if session.fork.effort is not None else \
            (chosen if chosen is not None else self.channel_settings.of(session.fork.home)).effort
        saved: list[memory.MemoryEntry] = []
        asked = asking(self.of_fork(session.fork, history, connections, cache, since=saved))
        return replace(with_note(asked, memory.note(saved)), effort=effort)

    def _parent_memory(self, session: Session, history: list[Turn], model: str | None,
                       read: list[memory.MemoryEntry] | None = None) -> tuple[list, list]:
        """The channel conversation's memory: what its `system` carries, and what a mid-conversation system message
        tells after its cached prefix. On a model that takes such messages the prefix keeps the memory as it was when
        it began (its first turn, or its latest compaction, which rewrote it anyway) and later entries come after
        it, so a write costs only its own tokens; on others the `system` carries it all, as it is now."""
        entries = self.memories.seen_in(session.channel) if read is None else read  # `read`: with the batch
        remembered = memory.visible_to(entries, None)
        if not takes_system_messages(model):
            return remembered, []
        return memory.split(remembered, memory.folded_at(history[0].created_at if history else None, history))

    def of_fork(self, fork: Fork, history: list[Turn] | None = None, connections: Connections | None = None,
                cache: CacheMode = CacheMode.AUTO, since: list | None = None) -> ModelInput:
        """Up the chain of inheriting forks to the channel: each level's turns up to its child's fork point.
        A fork keeps its channel's instructions, model, tools and connectors as they were at its fork point
        (a snapshot); its connectors' tokens are read now. Its system carries the memory saved before it opened (or
        before its latest compaction, which rewrote its prefix anyway); what was saved since is added to `since`,
        when given, for the caller's note."""
        own = self.turns.turns(fork.id) if history is None else history
        base, inherited = self._fork_input(fork, own, cache)
        configured = base.configured(fork.instructions, fork.model, fork.tools, fork.connectors if connections else ())
        top = self._top(fork)
        remembered = memory.visible_to(self.memories.seen_in(top.home), top.owner_id if top.private else None)
        folded = memory.folded_at(fork.created_at, own)
        if inherited and folded == fork.created_at and takes_system_messages(fork.model or self.default_model):
            # the channel's conversation keeps the memory its prefix began with (_parent_memory): so does a fork
            # that inherits that prefix, until its own compaction, so that its first request reads the parent's cache
            folded = memory.folded_at(inherited[0].created_at, inherited)
        before, later = memory.split(remembered, folded)
        if since is not None:
            since.extend(later)
        configured = replace(configured, system=memory.with_memory(configured.system, before))
        if not connections or not configured.connectors:
            return configured
        return connections.attach(configured, top.home)

    def _top(self, fork: Fork) -> Fork:
        return top_fork(self.sessions, fork)

    def _fork_input(self, fork: Fork, own: list[Turn], cache: CacheMode) -> tuple[ModelInput, list[Turn]]:
        """The fork's input, and the channel's turns it inherits (none: it inherits no channel prefix)."""
        ancestors: list[tuple[Fork, list[Turn]]] = []
        inherited: list[Turn] = []
        channel_pruned = False
        child = fork
        while child.mode is Mode.INHERIT and child.fork_point_seq:
            turns = self.turns.turns(child.parent_id, upto_seq=child.fork_point_seq)
            if not child.nested:
                inherited = turns
                channel_pruned = self.sessions.session(child.parent_id).pruned
                break
            child = self.sessions.fork(child.parent_id)
            ancestors.insert(0, (child, turns))
        return fork_input(fork, inherited, own, ancestors, channel_pruned, cache), inherited


def top_fork(sessions: Sessions, fork: Fork) -> Fork:
    """The fork at the top of its chain, whose home is the channel whose settings (connectors' tokens, memory)
    the fork follows (for a private fork, the channel it forks, not the DM its thread is in)."""
    while fork.nested:
        fork = sessions.fork(fork.parent_id)
    return fork


def memory_home(sessions: Sessions, channel: Channel, fork: Fork | None) -> tuple[Channel, str | None]:
    """Whose memory a session reads and writes: its channel's (a fork's top fork's home), and for a private fork its
    owner's own."""
    if fork is None:
        return channel, None
    top = top_fork(sessions, fork)
    return top.home, top.owner_id if top.private else None


def with_note(base: ModelInput, note: str) -> ModelInput:
    """Memory saved since the session's prefix began, told after that prefix: just before the final block (the
    last user's words), so no earlier byte changes and the moving breakpoint stays where it was."""
    if not note or not base.blocks:
        return base
    return replace(base, blocks=(*base.blocks[:-1], Block("user", note), base.blocks[-1]))


class MemoryTools:
    """Claude's memory tool, offered on a request where its session's channel allows it."""

    def __init__(self, remembering: Remembering, default_mode: str = "off", *, channel_settings: ChannelSettingsStore,
                 sessions: Sessions):
        self.remembering = remembering
        self.channel_settings, self.sessions = channel_settings, sessions
        self.default_mode = default_mode  # THREADFORK_MEMORY_TOOL

    def equip(self, request: ModelInput, session: Session, chosen: ChannelSettings | None,
              asker: str | None) -> ModelInput:
        """The request with the memory tool offered, where the session's channel allows it."""
        home, owner = memory_home(self.sessions, session.channel, session.fork)
        if chosen is None or session.fork is not None:  # a fork follows its channel's setting as it is now
            chosen = self.channel_settings.of(home)
        mode = chosen.memory_tool or self.default_mode
        if mode == "off":
            return request
        return replace(request, memory=MemoryTool(self.remembering, home, owner, session.fork, asker or "",
                                                  mode == "ask"))


@dataclass(frozen=True)
class MemoryTool:
    """One answer's memory tool: a command in, (tool_result text, is_error) out."""

    remembering: Remembering
    home: Channel
    owner: str | None
    fork: Fork | None
    asker: str  # whose turn Claude was answering: kept as the entry's author id
    ask: bool  # "ask first": new entries wait for Keep

    def __call__(self, command: dict) -> tuple[str, bool]:
        memories = self.remembering.memories
        files = [e for e in memories.entries(self.home) if e.owner_id == self.owner]
        try:
            result, change = perform(command, files)
            if change is not None:
                self._apply(change, files)
        except (ToolError, ValueError) as refused:
            return str(refused), True
        return result, False

    def _apply(self, change: Change, files) -> None:
        memories = self.remembering.memories
        if change.kind == "create":
            self.remembering.write(self.home, change.text, self.asker, CLAUDE, self.owner, self.fork, None,
                                   pending=self.ask, path=change.path, by_claude=True)
        elif change.kind == "delete":
            memories.delete(change.entry.id)
        elif change.kind == "rename":
            memories.edit(change.entry.id, path=change.path)
        else:
            others = [e for e in files if e.id != change.entry.id]
            why = memory.over_budget(others, change.text, self.remembering.budget(self.home))
            if why:
                raise ValueError(why)
            memories.edit(change.entry.id, text=change.text)
