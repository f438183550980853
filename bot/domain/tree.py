"""Forks as the tree they form: each followed by its own forks, by number."""
from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import TypeVar

from .model import Fork

Item = TypeVar("Item")


def as_tree(items: Sequence[Item], fork_of: Callable[[Item], Fork]) -> list[tuple[Item, int]]:
    """The items in tree order with their level: 0 for a fork whose parent is not among them (the
    channel's forks, or a fork whose parent is closed or belongs to someone else's list)."""
    present = {fork_of(item).id for item in items}
    below: dict[int, list[Item]] = {}
    roots = []
    for item in items:
        fork = fork_of(item)
        if fork.nested and fork.parent_id in present:
            below.setdefault(fork.parent_id, []).append(item)
        else:
            roots.append(item)
    ordered: list[tuple[Item, int]] = []

    def visit(item: Item, level: int) -> None:
        ordered.append((item, level))
        for child in sorted(below.get(fork_of(item).id, []), key=lambda c: fork_of(c).number):
            visit(child, level + 1)

    for root in roots:
        visit(root, 0)
    return ordered
