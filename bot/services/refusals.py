"""A domain error becomes one private answer to the person who caused it."""
from __future__ import annotations

from ..domain.errors import ChildrenOpen, ThreadforkError
from .ports import Audience, PrivateAnswers


def refuse(answers: PrivateAnswers, audience: Audience, error: ThreadforkError) -> None:
    """The error's words; a fork whose own forks are open also lists them, with their buttons."""
    if isinstance(error, ChildrenOpen):
        answers.refuse_with_children(audience, str(error), error.children)
    else:
        answers.tell(audience, str(error))
