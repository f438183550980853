"""A session's model input, read out of the store: the fork pointer is resolved here."""
from __future__ import annotations

from ..domain.context import ModelInput, asking, fork_input, parent_input
from ..domain.model import Fork, Mode, Session, Turn
from .ports import TurnQueue


def model_input(turns: TurnQueue, session: Session, history: list[Turn] | None = None) -> ModelInput:
    """The input that asks for the session's next answer. `history`: the session's own turns, when
    the caller has just read them."""
    if session.fork is None:
        return asking(parent_input(turns.turns(session.id) if history is None else history))
    return asking(fork_model_input(turns, session.fork, history))


def fork_model_input(turns: TurnQueue, fork: Fork, history: list[Turn] | None = None) -> ModelInput:
    inherited = []
    if fork.mode is Mode.INHERIT and fork.fork_point_seq:
        inherited = turns.turns(fork.parent_id, upto_seq=fork.fork_point_seq)
    return fork_input(fork, inherited, turns.turns(fork.id) if history is None else history)
