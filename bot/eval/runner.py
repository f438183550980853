"""One arm of one scenario, played through Threadfork's own use cases.

Each run gets a fresh SQLite database in a temporary folder and its own `Services`, built exactly as
bot/app.py builds them except for Slack's ports (recording.py: no Slack). People's messages go
through the Router as channel mentions and thread messages, forks are opened and merged with the
slash-command use cases, and every model call goes through the Model port the caller passes (the
real Claude adapter), metered here. Anything the use cases would tell a person — a failed answer, a
refusal, a notice — stops the run: an eval that silently lost a turn would measure nothing.
"""
from __future__ import annotations

import itertools
import tempfile
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

from ..domain.merge import worth_remembering
from ..domain.model import Channel, ForkStatus, Role, Usage
from ..services.compaction import Compactor
from ..services.commands import SlashCommand
from ..app import made, wire_services
from ..services.policy import Policy
from ..services.ports import Audience, Chat, Completion, Model
from ..services.routing import IncomingMessage
from ..store import open_store
from .recording import RecordingChat
from .grading import grade
from .scenario import Exploration, Line, Scenario

ARMS = ("forks", "inline", "none")  # the arms every run plays
MEMORY = "memory"  # forks, each merge's conclusions remembered, the parent compacted before the questions
EVERY_ARM = (*ARMS, MEMORY)
COMPACT_AT = 400  # the memory arm's compaction budget: all but the parent's last turns are compacted, whatever its size
TEAM, CHANNEL, BOT_USER = "T0EVAL001", "C0EVAL001", "U0EVALBOT"

Progress = Callable[[str], None]

# what the eval never expects to hear (it merges without review: a draft would leave a fork unmerged)
PROBLEMS = frozenset({"reply_failed", "tell", "refuse_merge", "refuse_with_children", "post_notice", "budget_reached",
                      "post_draft", "close_draft", "open_draft_editor", "ask_redraft_guidance", "open_settings",
                      "ask_to_forget", "settle_question"})


class EvalFailed(Exception):
    pass


@dataclass(frozen=True)
class Answer:
    question: str  # the question's id
    kind: str
    text: str
    passed: bool
    missing: tuple[str, ...]


@dataclass
class ArmRun:
    scenario: str
    repeat: int
    arm: str
    answers: list[Answer] = field(default_factory=list)
    usages: list[Usage] = field(default_factory=list)  # one per model call, in order
    first_question_input_tokens: int = 0
    final_parent_input_tokens: int = 0  # what the parent's last request (the last question) read
    compactions: int = 0
    seconds: float = 0.0

    @property
    def correct(self) -> int:
        return sum(a.passed for a in self.answers)


class MeteredModel:
    """The Model port, counting what every call reported."""

    def __init__(self, model: Model):
        self.model = model
        self.usages: list[Usage] = []

    def complete(self, model_input, events=None, stop=None) -> Completion:
        completion = self.model.complete(model_input, events, stop)
        self.usages.append(completion.usage)
        return completion

    def ceiling(self, model_input) -> tuple[str, Usage]:
        return self.model.ceiling(model_input)

    def upload(self, name: str, media_type: str, data: bytes) -> str:
        return self.model.upload(name, media_type, data)

    def forget_upload(self, file_id: str) -> None:
        self.model.forget_upload(file_id)


def run_arm(scenario: Scenario, arm: str, repeat: int, model: Model, progress: Progress) -> ArmRun:
    if arm not in EVERY_ARM:
        raise ValueError(f"unknown arm {arm!r}")
    started = time.monotonic()
    with tempfile.TemporaryDirectory(prefix="threadfork-eval-") as folder:
        play = _Play(scenario, model, Path(folder) / "eval.db")
        try:
            run = play.run(arm, repeat, progress)
        finally:
            play.close()
    run.seconds = round(time.monotonic() - started, 1)
    return run


class _Play:
    def __init__(self, scenario: Scenario, model: Model, database: Path):
        self.scenario = scenario
        self.db, self.store = open_store(f"sqlite:///{database}")
        self.db.create_schema()
        self._said = itertools.count(1)
        self.chat = RecordingChat(lambda: f"1800000000.{next(self._said):06d}",
                                  names={p.user_id: p.name for p in scenario.people}, unnamed=lambda user_id: None)
        self.model = MeteredModel(model)
        self.services = wire_services(self.store, Chat.all_in(self.chat), self.model, bot_user_id=BOT_USER, policy=Policy())
        self.parent_id = self.store.sessions.parent_id(Channel(TEAM, CHANNEL))
        self._ts = itertools.count(1)

    def close(self) -> None:
        self.db.engine.dispose()

    def run(self, arm: str, repeat: int, progress: Progress) -> ArmRun:
        run = ArmRun(self.scenario.name, repeat, arm)
        for number, line in enumerate(self.scenario.parent, 1):
            progress(f"opening turn {number}/{len(self.scenario.parent)}")
            self._in_parent(line)
        for exploration in self.scenario.explorations if arm != "none" else ():
            if arm in ("forks", MEMORY):
                fork_id, summary = self._in_fork(exploration, progress)
                if arm == MEMORY:
                    self._remember(fork_id, summary, exploration)
            else:
                for number, line in enumerate(exploration.turns, 1):
                    progress(f"{exploration.topic}, inline turn {number}/{len(exploration.turns)}")
                    self._in_parent(line)
        if arm == MEMORY:
            progress("compacting the parent")
            compactor = made(Compactor, self.store, self.model, Policy(compact_at=COMPACT_AT))
            if compactor.compact(self.parent_id) is None:
                raise EvalFailed("the parent was not compacted")
        for number, question in enumerate(self.scenario.questions, 1):
            progress(f"question {number}/{len(self.scenario.questions)}")
            text = self._in_parent(Line(question.asker, self.scenario.asked(question)))
            result = grade(question, text)
            run.answers.append(Answer(question.id, question.kind, text, result.passed, result.missing))
            tokens = self._last_parent_usage().prompt_tokens
            run.first_question_input_tokens = run.first_question_input_tokens or tokens
            run.final_parent_input_tokens = tokens
        run.usages = list(self.model.usages)
        run.compactions = sum(t.role is Role.COMPACTION for t in self.store.turns.turns(self.parent_id))
        return run

    def _in_parent(self, line: Line) -> str:
        message = IncomingMessage(TEAM, CHANNEL, "channel", line.speaker.user_id, f"<@{BOT_USER}> {line.text}",
                                  self._next_ts())
        return self._answer(lambda: self.services.router.receive(message), "reply")

    def _remember(self, fork_id: int, summary: str, exploration: Exploration) -> None:
        """Each conclusion the merge post offers to remember, remembered by whoever merged (its Remember button)."""
        who = Audience(TEAM, CHANNEL, exploration.merged_by.user_id)
        for item in worth_remembering(summary):
            before = len(self.chat.said)
            self.services.remembering.from_merge(fork_id, item, who)
            problems = [s for s in self.chat.said[before:] if s.what in PROBLEMS]
            if problems:
                raise EvalFailed(f"remembering “{item}” failed: {problems[0].text}")

    def _in_fork(self, exploration: Exploration, progress: Progress) -> tuple[int, str]:
        """The exploration in a fork, merged: the fork's id and its summary as posted."""
        first, *rest = exploration.turns
        progress(f"{exploration.topic}, fork turn 1/{len(exploration.turns)}")
        opening = SlashCommand(TEAM, CHANNEL, first.speaker.user_id, f"--inherit {first.text}", None)
        self._answer(lambda: self.services.commands.fork(opening), "reply")
        (fork,) = self.store.sessions.forks_in(Channel(TEAM, CHANNEL), ForkStatus.OPEN)
        for number, line in enumerate(rest, 2):
            progress(f"{exploration.topic}, fork turn {number}/{len(exploration.turns)}")
            message = IncomingMessage(TEAM, CHANNEL, "channel", line.speaker.user_id, line.text, self._next_ts(),
                                      thread_ts=fork.root_ts)
            self._answer(lambda: self.services.router.receive(message), "reply")
        progress(f"{exploration.topic}, merge")
        merge = SlashCommand(TEAM, CHANNEL, exploration.merged_by.user_id, str(fork.number), None)
        posted = self._answer(lambda: self.services.commands.merge(merge), "post_merge")
        if self.store.sessions.fork(fork.id).status is not ForkStatus.MERGED:
            raise EvalFailed(f"fork #{fork.number} ({exploration.topic}) was not merged")
        return fork.id, posted

    def _answer(self, act: Callable[[], None], what: str) -> str:
        """Do `act` and return the text of what it produced (`reply` or `post_merge`); fail on anything else."""
        before = len(self.chat.said)
        act()
        new = self.chat.said[before:]
        problems = [s for s in new if s.what in PROBLEMS]
        if problems:
            raise EvalFailed(f"Threadfork said “{problems[0].text}” ({problems[0].what})")
        produced = [s for s in new if s.what == what]
        if len(produced) != 1:
            raise EvalFailed(f"expected one {what}, got {len(produced)}")
        return produced[0].text

    def _last_parent_usage(self) -> Usage:
        turns = self.store.turns.turns(self.parent_id)
        return next(t.usage for t in reversed(turns) if t.role is Role.ASSISTANT)

    def _next_ts(self) -> str:
        return f"1700000000.{next(self._ts):06d}"
