"""Claude's memory tool in a channel that allows it (its `memory_tool` setting: off, ask, on): the request offers
`memory_20250818`, and each command Claude sends during the answer is performed on the channel's memory (a
private fork's: its owner's own) and answered within the same turn — no extra model call of ours.

Each new entry shows the channel the same "remembered" note as a person's `remember` (with "ask", Keep and Undo:
the entry is seen by no request until someone keeps it). The budget holds for Claude as for people: an entry past
it is refused in the tool_result, which says why.
"""
from __future__ import annotations

from dataclasses import dataclass, replace

from ..domain.context import ModelInput
from ..domain.memory import over_budget
from ..domain.memory_files import Change, ToolError, perform
from ..domain.model import Channel, Fork, Session
from ..domain.settings import ChannelSettings
from .ports import ChannelSettingsStore
from .remembering import Remembering

CLAUDE = "Claude"  # the author name of what Claude remembers (its author id: the person it was answering)


class MemoryTools:
    def __init__(self, remembering: Remembering, default_mode: str = "off", *, channel_settings: ChannelSettingsStore):
        self.remembering = remembering
        self.channel_settings = channel_settings
        self.default_mode = default_mode  # THREADFORK_MEMORY_TOOL

    def equip(self, request: ModelInput, session: Session, chosen: ChannelSettings | None,
              asker: str | None) -> ModelInput:
        """The request with the memory tool offered, where the session's channel allows it."""
        home, owner = self.remembering.home_of(session.channel, session.fork)
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
            why = over_budget(others, change.text, self.remembering.budget(self.home))
            if why:
                raise ValueError(why)
            memories.edit(change.entry.id, text=change.text)
