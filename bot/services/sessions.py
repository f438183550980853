"""Reading a session's model input out of the store (the fork pointer is resolved here)."""
from __future__ import annotations

from dataclasses import replace

from ..domain.context import ModelInput, fork_input, parent_input
from ..domain.model import Fork, Mode, Session, Turn
from ..store import Store


def model_input(store: Store, session: Session, history: list[Turn] | None = None) -> ModelInput:
    """`history`: the session's own turns, when the caller has just read them."""
    if session.fork is None:
        built = parent_input(store.turns(session.id) if history is None else history)
    else:
        built = fork_model_input(store, session.fork, history)
    return replace(built, cache_key=session.id)


def fork_model_input(store: Store, fork: Fork, history: list[Turn] | None = None) -> ModelInput:
    inherited = []
    if fork.mode is Mode.INHERIT and fork.fork_point_seq:
        inherited = store.turns(fork.parent_id, upto_seq=fork.fork_point_seq)
    return fork_input(fork, inherited, store.turns(fork.id) if history is None else history)
