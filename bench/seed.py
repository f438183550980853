"""The one place the bench writes into Threadfork's store directly: a channel's history of N turns
for figures 1, 2 and 9, written in a moment instead of N model turns. `bot.store` is the moving
part: when its API changes, only this function changes."""
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
