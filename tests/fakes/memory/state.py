"""The in-memory store's state: rows like the SQL tables', behind one lock (every method of every
part holds it for its whole run, which makes each one atomic, as a transaction is)."""
from __future__ import annotations

import copy
from contextlib import contextmanager
import itertools
import threading
from dataclasses import dataclass, field, replace
from datetime import datetime

from bot.domain.conditions import all_hold, apply
from bot.domain.model import Channel, ContextSize, Draft, Fork, ForkStatus, Mode, Role, Session, Turn, TurnStatus, Usage
from bot.domain.queue import held_by, lease_takeable, lease_until
from bot.domain.settings import ChannelSettings
from bot.domain.spend import Spent, day_of, spent
from bot.domain.transitions import Move
from bot.services.ports import Clock, StoredFile


@dataclass
class SessionRow:
    id: int
    kind: str  # parent | fork
    channel_id: str
    team_id: str
    created_at: datetime
    last_activity_at: datetime
    parent_id: int | None = None
    number: int | None = None
    mode: Mode = Mode.INHERIT
    topic: str = ""
    owner_id: str | None = None
    fork_point_seq: int | None = None
    inherited: ContextSize = ContextSize(0, 0)
    status: ForkStatus = ForkStatus.OPEN
    root_ts: str | None = None
    origin_ts: str | None = None
    depth: int = 1
    parent_number: int | None = None
    parent_root_ts: str | None = None
    opened_at_seq: int | None = None
    adopted: bool = False
    draft_number: int = 0  # the draft columns, as in the SQL table
    draft_text: str | None = None
    draft_seq: int | None = None
    draft_ts: str | None = None
    draft_by: str | None = None
    draft_input_tokens: int | None = None  # every draft's, added up
    draft_output_tokens: int | None = None
    summary_edited_by: str | None = None
    instructions: str | None = None
    model: str | None = None
    tools: tuple[str, ...] | None = None
    connectors: tuple = ()  # its Connectors at its fork point
    effort: str | None = None
    merged_by: str | None = None
    merge_owner: str | None = None
    merge_until: datetime | None = None
    merge_attempts: int = 0
    merge_guidance: str | None = None
    summary: str | None = None
    summary_tokens: int | None = None
    summary_ts: str | None = None
    reminded_at: datetime | None = None
    budget_extra: int = 0
    next_seq: int = 0
    next_fork_number: int = 0
    pruned_before_seq: int = 0
    private_of: str | None = None
    closed_at: datetime | None = None
    lease_owner: str | None = None
    lease_until: datetime | None = None

    @property
    def channel(self) -> Channel:
        return Channel(self.team_id, self.channel_id)

    @property
    def home(self) -> Channel:
        return Channel(self.team_id, self.private_of or self.channel_id)

    def fork(self) -> Fork:
        return Fork(id=self.id, channel_id=self.channel_id, team_id=self.team_id, number=self.number,
                    parent_id=self.parent_id, mode=self.mode, topic=self.topic, owner_id=self.owner_id,
                    fork_point_seq=self.fork_point_seq, status=self.status, root_ts=self.root_ts,
                    merged_by=self.merged_by, summary_ts=self.summary_ts, last_activity_at=self.last_activity_at,
                    inherited=self.inherited, origin_ts=self.origin_ts, depth=self.depth,
                    parent_number=self.parent_number, parent_root_ts=self.parent_root_ts,
                    opened_at_seq=self.opened_at_seq, adopted=self.adopted, draft=self.draft(),
                    draft_number=self.draft_number, drafted_seq=self.draft_seq, summary_edited_by=self.summary_edited_by,
                    instructions=self.instructions, model=self.model, tools=self.tools, connectors=self.connectors,
                    effort=self.effort, pruned_before_seq=self.pruned_before_seq, private_of=self.private_of,
                    merge_guidance=self.merge_guidance or "", merge_taken=self.merge_owner is not None,
                    created_at=self.created_at)

    def draft(self) -> Draft | None:
        if self.draft_text is None:
            return None
        return Draft(self.draft_number, self.draft_text, self.draft_seq or 0, self.draft_ts, self.draft_by or "",
                     self.draft_usage)

    @property
    def draft_usage(self) -> Usage:
        return Usage(self.draft_input_tokens or 0, self.draft_output_tokens or 0)

    def session(self) -> Session:
        return Session(self.id, self.channel_id, self.team_id, self.fork() if self.kind == "fork" else None,
                       self.pruned_before_seq)


@dataclass
class TurnRow:
    turn: Turn  # replaced by a new object whenever the turn changes, as a fresh read from SQL would be
    created_at: datetime
    deleted: bool = False
    source_fork_id: int | None = None
    attempts: int = 0

    @property
    def status(self) -> TurnStatus:
        return self.turn.status

    def change(self, **values) -> None:
        self.turn = replace(self.turn, **values)


@dataclass
class InboxRow:
    payload: str | None  # None once done
    received_at: datetime
    claimed_until: datetime | None
    attempts: int = 1
    done_at: datetime | None = None

    def finish(self, now: datetime) -> None:
        """Done: only its key stays (SqlInbox's DELIVERY_DONE)."""
        self.done_at, self.claimed_until, self.payload = now, None, None


_ROWS = ("sessions", "turns", "claims", "markers", "inbox", "files", "files_kept_at", "feedback", "messages", "settings",
         "tokens", "connector_calls", "viewing", "spend", "reserved", "kept_with", "memory_entries")


@dataclass
class Memory:
    clock: Clock
    lock: threading.RLock = field(default_factory=threading.RLock)
    sessions: dict[int, SessionRow] = field(default_factory=dict)
    turns: dict[int, list[TurnRow]] = field(default_factory=dict)  # session id → rows in seq order
    claims: dict[str, datetime] = field(default_factory=dict)
    markers: dict[str, datetime] = field(default_factory=dict)
    inbox: dict[str, InboxRow] = field(default_factory=dict)
    files: dict[str, StoredFile] = field(default_factory=dict)  # sha256 → content
    files_kept_at: dict[str, datetime] = field(default_factory=dict)  # sha256 → when it was kept
    feedback: dict[tuple[str, str, str], str] = field(default_factory=dict)  # (channel, ts, user) → value
    messages: dict[tuple[str, str], int] = field(default_factory=dict)  # (channel, ts) → session id
    settings: dict[Channel, ChannelSettings] = field(default_factory=dict)  # what /threadfork saved
    tokens: dict[Channel, dict[str, str]] = field(default_factory=dict)  # connectors' sealed tokens
    connector_calls: dict[Channel, dict[int, dict[str, int]]] = field(default_factory=dict)
    viewing: dict[tuple[str, str], str | None] = field(default_factory=dict)  # (team, user) → channel in view
    spend: dict[tuple[Channel, str], Spent] = field(default_factory=dict)  # (channel, UTC day) → figures
    reserved: dict[tuple[Channel, str], int] = field(default_factory=dict)  # (channel, UTC day) → set aside
    kept_with: dict[int, object] = field(default_factory=dict)  # reply id → the reservation kept with it
    memory_entries: dict[int, object] = field(default_factory=dict)  # id → MemoryEntry (bot/domain/memory.py)
    _ids: itertools.count = field(default_factory=lambda: itertools.count(1))
    _working: bool = False  # a unit of work is open (on the thread holding the lock)

    def snapshot(self, channel: Channel, parent: Fork | None, defaults: ChannelSettings) -> dict:
        """The settings a fork opened now keeps: its parent fork's, or its channel's now over `defaults`."""
        if parent is not None:
            return {"instructions": parent.instructions, "model": parent.model, "tools": parent.tools,
                    "connectors": parent.connectors, "effort": parent.effort}
        chosen = self.settings.get(channel, ChannelSettings())
        return {"instructions": chosen.instructions or defaults.instructions, "model": chosen.model or defaults.model,
                "tools": chosen.tools if chosen.tools is not None else defaults.tools,
                "connectors": (chosen.connectors if chosen.connectors is not None else defaults.connectors) or (),
                "effort": chosen.effort or defaults.effort}

    @contextmanager
    def work(self):
        """The unit of work, in memory: the lock held for the whole block (so it is atomic, as a transaction is),
        and every row as it was before it put back when an exception leaves it (rolled back). Units nest."""
        with self.lock:
            if self._working:
                yield
                return
            before = copy.deepcopy({name: getattr(self, name) for name in _ROWS})
            self._working = True
            try:
                yield
            except BaseException:
                for name, rows in before.items():
                    setattr(self, name, rows)
                raise
            finally:
                self._working = False

    def new_id(self) -> int:
        return next(self._ids)

    def rows(self, session_id: int) -> list[TurnRow]:
        return self.turns.setdefault(session_id, [])

    def append(self, session_id: int, role: Role, text: str, status: TurnStatus, *, author_id=None,
               author_name=None, slack_ts=None, usage: Usage = Usage(), source_fork_id=None,
               covers_seq=None, attachments=()) -> Turn:
        now = self.clock()
        session = self.sessions[session_id]
        session.next_seq += 1
        session.last_activity_at = now
        turn = Turn(session_id, session.next_seq, role, text, author_id, author_name, status, usage, slack_ts,
                    self.new_id(), covers_seq, tuple(attachments), created_at=now)
        self.rows(session_id).append(TurnRow(turn, now, source_fork_id=source_fork_id))
        return turn

    def add_spend(self, session_id: int, usage: Usage, in_fork: bool | None = None) -> None:
        """A recorded call's cost, added to its channel's day (bot/store/channels.py)."""
        session = self.sessions[session_id]
        self.add_spend_to(session.home, usage, session.kind == "fork" if in_fork is None else in_fork)

    def add_spend_to(self, home: Channel, usage: Usage, in_fork: bool) -> None:
        figures = spent(usage, in_fork)
        if figures != Spent():
            key = (home, day_of(self.clock()))  # a private fork's cost is its channel's
            self.spend[key] = self.spend.get(key, Spent()) + figures

    def release(self, reservation) -> None:
        """A spend reservation given back (the caller holds the lock)."""
        if reservation is not None and reservation.reply_id is not None:
            reservation = self.kept_with.pop(reservation.reply_id, None)  # given back once, by whoever comes first
        if reservation is not None:
            key = (reservation.channel, reservation.day)
            self.reserved[key] = max(self.reserved.get(key, 0) - reservation.micros, 0)

    def index(self, channel: Channel, ts: str, session_id: int) -> None:
        self.messages.setdefault((channel, ts), session_id)

    def row_of(self, turn: Turn) -> TurnRow:
        return next(r for r in self.rows(turn.session_id) if r.turn.id == turn.id)

    def settle(self, pending: list[Turn], status: TurnStatus) -> None:
        for turn in pending:
            row = self.row_of(turn)
            if row.turn.status is TurnStatus.PENDING:
                row.change(status=status)

    def take_lease(self, session_id: int, owner: str, seconds: float) -> bool:
        now = self.clock()
        return self.change(session_id, [lease_takeable(owner, now)],
                           {"lease_owner": owner, "lease_until": lease_until(now, seconds)})

    def release_lease(self, session_id: int, owner: str) -> None:
        self.change(session_id, [held_by(owner)], {"lease_owner": None, "lease_until": None})

    def change(self, session_id: int, conditions, changes) -> bool:
        """Change the session's row if every condition holds, atomically (as the SQL store's UPDATE … WHERE)."""
        with self.lock:
            row = self.sessions[session_id]
            if not all_hold(conditions, row):
                return False
            apply(changes, row)
            return True

    def move(self, fork_id: int, move: Move) -> bool:
        return self.change(fork_id, move.conditions, move.values)

    def change_all(self, conditions, changes) -> None:
        with self.lock:
            for row in self.sessions.values():
                if all_hold(conditions, row):
                    apply(changes, row)

    def forks(self, *conditions) -> list[SessionRow]:
        return [s for s in self.sessions.values() if s.kind == "fork" and all(c(s) for c in conditions)]

    def involves(self, user_id: str):
        """A session the user opened or wrote in."""
        return lambda s: s.owner_id == user_id or any(r.turn.author_id == user_id for r in self.rows(s.id))
