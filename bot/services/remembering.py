"""Memory written on purpose and seen: `@Threadfork remember <text>` (in the channel, a DM, a fork's thread),
its note with Undo, and `/threadfork memory` (the entries, edited and deleted in a modal).

Who may write a channel's memory is its setting (anyone, or admins); a workspace's memory is written by admins
(`remember --workspace`). An entry past the channel's budget is refused with how to make room. A private
fork writes its owner's own memory of the channel (bot/domain/memory.py). Every write shows one short note
where it was said; its Undo deletes the entry for real. Claude's own writes (the memory tool: model_inputs.py) go
through `write` too, and show the same note.
"""
from __future__ import annotations

import hashlib
import logging

from ..domain import memory
from ..domain.errors import ThreadforkError
from ..domain.memory import MemoryEntry, workspace_of
from ..domain.model import Channel, Fork, ForkStatus
from .access import NOT_ADMIN, Access
from .model_inputs import memory_home
from .policy import Policies
from .ports import Audience, Claims, Memories, MemoryNotes, People, Place, PrivateAnswers, Sessions

log = logging.getLogger(__name__)

WORKSPACE_FLAG = "--workspace"
NOT_A_WRITER = "Only this channel's admins may change its memory here (a channel setting in `/threadfork`)."
GONE = "That memory entry is gone already."


class Remembering:
    def __init__(self, notes: MemoryNotes, answers: PrivateAnswers, people: People, policies: Policies,
                 access: Access, *, memories: Memories, sessions: Sessions, claims: Claims):
        self.memories, self.sessions, self.claims = memories, sessions, claims
        self.notes = notes
        self.answers = answers
        self.people = people
        self.policies = policies
        self.access = access

    def remember(self, channel: Channel, user_id: str, text: str, audience: Audience,
                 fork: Fork | None = None) -> MemoryEntry | None:
        """A person's `remember <text>`, said in `channel` (or in `fork`'s thread); None when refused (they are
        told why, privately)."""
        home, owner = memory_home(self.sessions, channel, fork)
        words = text.strip()
        if words.lower().startswith(WORKSPACE_FLAG):
            home, owner, words = workspace_of(channel.team_id), None, words[len(WORKSPACE_FLAG):]
        try:
            line = memory.cleaned(words)
            if owner is None:  # a person's own memory is theirs to write, whoever writes the channel's
                self.check_writer(home, user_id)
        except (ValueError, ThreadforkError) as refused:
            self.answers.tell(audience, str(refused))
            return None
        return self.write(home, line, user_id, self.people.display_name(channel.team_id, user_id), owner,
                          fork, audience)

    def write(self, home: Channel, line: str, author_id: str, author_name: str | None, owner: str | None,
              fork: Fork | None, audience: Audience | None, pending: bool = False, path: str | None = None,
              by_claude: bool = False, source: Fork | None = None) -> MemoryEntry | None:
        """Add the entry if it fits the budget (else say why: to `audience`, or raise ValueError for Claude),
        then post its note where it was said."""
        why = self.no_room(home, owner, line)
        if why:
            if audience is None:
                raise ValueError(why)
            self.answers.tell(audience, why)
            return None
        source = source or (fork if fork is not None and not fork.private else None)
        entry = self.memories.add(home, line, author_id, author_name, owner_id=owner,
                                  source_fork=source.number if source else None,
                                  source_ts=source.root_ts if source else None, path=path, pending=pending)
        where = Place(fork.channel_id, fork.root_ts, fork.team_id, None) if fork else \
            Place(audience.channel_id if audience else home.id, None, home.team_id, None)
        try:
            self.notes.post_remembered(where, memory.remembered_note(entry, by_claude), entry.id, pending)
        except ThreadforkError:
            log.warning("memory entry %s was kept; its note could not be posted", entry.id)
        return entry

    def check_writer(self, home: Channel, user_id: str) -> None:
        """Raises NotAllowed-like errors (ThreadforkError) for someone who may not write this memory."""
        if home.id == memory.WORKSPACE:
            if not self.access.is_admin(home.team_id, user_id):
                raise ThreadforkError(NOT_ADMIN.format(verb="change the workspace's memory"))
        elif self.policies.of(home).channel.memory_writers == "admins" and not self.access.is_admin(home.team_id,
                                                                                                     user_id):
            raise ThreadforkError(NOT_A_WRITER)

    def no_room(self, home: Channel, owner: str | None, line: str, instead_of: int | None = None) -> str | None:
        """Why `line` does not fit the memory it would join (a person's own entries have a budget of their own;
        `instead_of`: the entry it replaces), or None."""
        pool = [e for e in self.memories.entries(home) if e.owner_id == owner and e.id != instead_of]
        return memory.over_budget(pool, line, self.budget(home))

    def budget(self, home: Channel) -> int:
        if home.id == memory.WORKSPACE:
            return self.policies.base.channel.memory_budget or 0
        return self.policies.of(home).channel.memory_budget or 0

    def from_merge(self, fork_id: int, text: str, audience: Audience) -> MemoryEntry | None:
        """A merge post's (or a draft's) Remember: the conclusion joins the memory of the fork's channel, linked to
        the fork — once, however often it is pressed."""
        fork = self.sessions.fork(fork_id)
        if fork is None or fork.team_id != audience.team_id:
            self.answers.tell(audience, "That fork is gone, so its conclusions can't be remembered from here.")
            return None
        home, owner = memory_home(self.sessions, fork.channel, fork)
        if owner and fork.status is ForkStatus.MERGED:
            owner = None  # merged: its owner approved what reaches the channel
        try:
            line = memory.cleaned(text)
            if owner is None:
                self.check_writer(home, audience.user_id)
            why = self.no_room(home, owner, line)
            if why:
                raise ValueError(why)
        except (ValueError, ThreadforkError) as refused:
            self.answers.tell(audience, str(refused))
            return None
        key = f"remember:{fork.id}:{owner or ''}:{hashlib.sha256(line.encode()).hexdigest()[:32]}"
        if not self.claims.claim(key):
            self.answers.tell(audience, "That conclusion is remembered already.")
            return None
        if owner:  # a private fork's draft: its owner's own memory until the merge (DESIGN invariant 14)
            return self.write(home, line, audience.user_id, self.people.display_name(home.team_id, audience.user_id),
                              owner, fork, audience)
        where = Audience(home.team_id, home.id, audience.user_id)  # its note goes to the channel's top level
        # a private fork's number and thread are its owner's DM's: the channel's entry names neither
        return self.write(home, line, audience.user_id, self.people.display_name(home.team_id, audience.user_id),
                          None, None, where, source=None if fork.private else fork)

    def undo(self, entry_id: int, audience: Audience, message_ts: str | None) -> None:
        """The note's Undo: the entry deleted for real, the note says so (once, whoever presses it first)."""
        entry = self._writable(entry_id, audience)
        if entry is None:
            return
        gone = self.memories.delete(entry_id)
        if gone is not None and message_ts:
            self.notes.settle_remembered(audience.channel, message_ts,
                                         f"↩️ <@{audience.user_id}> undid “{gone.text}”: it is no longer remembered.")

    def keep(self, entry_id: int, audience: Audience, message_ts: str | None) -> None:
        """Ask first's Keep: Claude's entry is seen from the next request on."""
        entry = self._writable(entry_id, audience)
        if entry is not None and self.memories.keep(entry_id) and message_ts:
            self.notes.settle_remembered(audience.channel, message_ts,
                                         f"🧠 <@{audience.user_id}> kept what Claude remembered: “{entry.text}”")

    def _writable(self, entry_id: int, audience: Audience) -> MemoryEntry | None:
        entry = self.memories.entry(entry_id)
        if entry is None or entry.channel.team_id != audience.team_id:
            self.answers.tell(audience, GONE)
            return None
        if entry.owner_id and entry.owner_id != audience.user_id:
            self.answers.tell(audience, "That entry is someone's own memory: only they may change it.")
            return None
        try:
            if entry.owner_id is None:  # their own entry is theirs to change
                self.check_writer(entry.channel, audience.user_id)
        except ThreadforkError as refused:
            self.answers.tell(audience, str(refused))
            return None
        return entry

    # `/threadfork memory`: the modal
    def open(self, team_id: str, channel: Channel, user_id: str, trigger_id: str) -> None:
        self.notes.open_memory(team_id, trigger_id, channel, self.listed(channel, user_id), self.budget(channel))

    def listed(self, channel: Channel, user_id: str) -> list[MemoryEntry]:
        """What the modal lists for a person: the workspace's, the channel's and their own entries of it."""
        return [e for e in self.memories.seen_in(channel) if e.owner_id in (None, user_id)]

    def delete(self, entry_id: int, audience: Audience, view_id: str | None) -> None:
        if self._writable(entry_id, audience) is not None:
            self.memories.delete(entry_id)
        self._refresh(audience, view_id)

    def edit_form(self, entry_id: int, audience: Audience, trigger_id: str) -> None:
        entry = self._writable(entry_id, audience)
        if entry is not None:
            self.notes.open_memory_editor(audience.team_id, trigger_id, entry)

    def edit(self, entry_id: int, audience: Audience, text: str, list_view_id: str | None = None) -> str | None:
        """A submitted edit: why it was refused (shown in the modal), or None once saved (and the list under it
        shown anew)."""
        entry = self._writable(entry_id, audience)
        if entry is None:
            return GONE
        try:
            line = memory.cleaned(text)
        except ValueError as refused:
            return str(refused)
        why = self.no_room(entry.channel, entry.owner_id, line, instead_of=entry.id)
        if why:
            return why
        self.memories.edit(entry_id, text=line)
        self._refresh(audience, list_view_id)
        return None

    def _refresh(self, audience: Audience, view_id: str | None) -> None:
        """The modal's list shown anew after a change."""
        if view_id:
            self.notes.refresh_memory(audience.team_id, view_id, audience.channel,
                                      self.listed(audience.channel, audience.user_id), self.budget(audience.channel))
