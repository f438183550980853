"""Scenarios: a team conversation as data (bot/eval/scenarios/<name>.json, shipped in the package).

A scenario names its people, the parent's opening turns (facts, decisions, constraints), the
explorations (each a list of turns: in the `forks` arm the first one opens the fork as its topic,
as `/fork <question>` does, and the rest are the thread's messages), and the questions asked at the
end, each with the patterns a correct answer must all match (grading.py) and a reference answer
that matches them. Loading validates all of it, so a broken scenario fails before any API call.
"""
from __future__ import annotations

import json
import re
from dataclasses import dataclass
from importlib import resources
from pathlib import Path

KINDS = ("fact", "outcome")  # a question about the opening turns, or about an exploration's result


class ScenarioError(Exception):
    pass


@dataclass(frozen=True)
class Person:
    key: str
    user_id: str
    name: str


@dataclass(frozen=True)
class Line:
    speaker: Person
    text: str


@dataclass(frozen=True)
class Exploration:
    topic: str  # a short label for the printout; the fork's topic is its first turn
    turns: tuple[Line, ...]
    merged_by: Person


@dataclass(frozen=True)
class Question:
    id: str
    kind: str
    asker: Person
    text: str
    expect: tuple[str, ...]
    reference: str


@dataclass(frozen=True)
class Scenario:
    name: str
    title: str
    people: tuple[Person, ...]
    parent: tuple[Line, ...]
    explorations: tuple[Exploration, ...]
    question_preamble: str
    questions: tuple[Question, ...]

    def asked(self, question: Question) -> str:
        """The text of the parent turn that asks `question`."""
        return f"{self.question_preamble}{question.text}"


def available() -> list[str]:
    """The names of the shipped scenarios."""
    folder = resources.files("bot.eval") / "scenarios"
    return sorted(p.name.removesuffix(".json") for p in folder.iterdir() if p.name.endswith(".json"))


def load(name: str) -> Scenario:
    """A shipped scenario by name, or a scenario file by path."""
    if name.endswith(".json"):
        return parse(json.loads(Path(name).read_text(encoding="utf-8")))
    if name not in available():
        raise ScenarioError(f"no scenario named {name!r}; there are: {', '.join(available())}")
    text = (resources.files("bot.eval") / "scenarios" / f"{name}.json").read_text(encoding="utf-8")
    return parse(json.loads(text))


def parse(data: dict) -> Scenario:
    try:
        people = {key: Person(key, p["id"], p["name"]) for key, p in data["people"].items()}

        def line(item: dict) -> Line:
            if item["from"] not in people:
                raise ScenarioError(f"unknown speaker {item['from']!r}")
            if not item["text"].strip():
                raise ScenarioError("a turn has no text")
            return Line(people[item["from"]], item["text"])

        explorations = tuple(
            Exploration(e["topic"], tuple(line(t) for t in e["turns"]), people[e["merged_by"]])
            for e in data["explorations"])
        questions = tuple(
            Question(q["id"], q["kind"], people[q["from"]], q["text"], tuple(q["expect"]), q["reference"])
            for q in data["questions"])
        scenario = Scenario(data["name"], data["title"], tuple(people.values()),
                            tuple(line(t) for t in data["parent"]), explorations,
                            data.get("question_preamble", ""), questions)
    except KeyError as missing:
        raise ScenarioError(f"scenario {data.get('name', '?')!r} lacks {missing}") from None
    _check(scenario)
    return scenario


def _check(scenario: Scenario) -> None:
    from .grading import grade  # the reference answers must pass their own patterns

    if not scenario.parent or not scenario.questions:
        raise ScenarioError(f"scenario {scenario.name!r} needs opening turns and questions")
    if any(not e.turns for e in scenario.explorations):
        raise ScenarioError(f"scenario {scenario.name!r} has an exploration without turns")
    ids = [q.id for q in scenario.questions]
    if len(set(ids)) != len(ids):
        raise ScenarioError(f"scenario {scenario.name!r} repeats a question id")
    for q in scenario.questions:
        if q.kind not in KINDS:
            raise ScenarioError(f"question {q.id!r}: kind must be one of {KINDS}")
        if not q.expect:
            raise ScenarioError(f"question {q.id!r} has no expected pattern")
        for pattern in q.expect:
            try:
                re.compile(pattern)
            except re.error as error:
                raise ScenarioError(f"question {q.id!r}: bad pattern {pattern!r}: {error}") from None
        if not grade(q, q.reference).passed:
            raise ScenarioError(f"question {q.id!r}: its reference answer fails its own patterns")
