"""The one place the bench writes into Threadfork's store directly: a channel's history of N turns
for figures 1, 2 and 9 (and the conversation figure 11's day starts from), written in a moment instead
of N model turns. `bot.store` is the moving part: when its API changes, only these functions change."""
from __future__ import annotations

from bot.domain.model import Channel, Role, TurnStatus, Usage
from bot.store import open_store
from tests.fakes.slack_api import TEAM_ID


def populate(url: str, channel: str, turns: int) -> None:
    db, store = open_store(url)
    db.create_schema()
    parent = store.sessions.parent_id(Channel(TEAM_ID, channel))
    for n in range(turns // 2):
        store.turns.append_turn(parent, Role.USER, question(n), TurnStatus.ANSWERED,
                                author_id="UBENCH01", author_name="bench")
        store.turns.append_turn(parent, Role.ASSISTANT, answer(n), TurnStatus.COMPLETE,
                                usage=Usage(1000 + n * 60, 80))
    db.engine.dispose()


def question(n: int) -> str:
    """The n-th user turn of a seeded history (the baseline is sent the same text)."""
    return f"question {n}: " + "context words " * 20


def answer(n: int) -> str:
    return f"answer {n}: " + "considered reply " * 30


def populate_pairs(url: str, channel: str, pairs: list[tuple[str, str]]) -> None:
    """A channel's conversation so far: each (question, answer) as a person's turn and Claude's reply."""
    db, store = open_store(url)
    db.create_schema()
    parent = store.sessions.parent_id(Channel(TEAM_ID, channel))
    for asked, answered in pairs:
        store.turns.append_turn(parent, Role.USER, asked, TurnStatus.ANSWERED, author_id="UBENCH01",
                                author_name="bench")
        store.turns.append_turn(parent, Role.ASSISTANT, answered, TurnStatus.COMPLETE,
                                usage=Usage(len(asked + answered) // 4, len(answered) // 4))
    db.engine.dispose()
