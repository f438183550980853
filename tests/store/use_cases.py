"""The use cases whose unit of work the contract tests drive on each store, made as bot/app.py makes them."""
from bot.app import made
from bot.services.merging import Merging


def merge_in(store, fork, parent_text: str, summary: str, usage) -> None:
    """Merging.merge_in: merged, the summary in the parent and its cost counted, as one unit of work (it needs
    none of Merging's collaborators beyond the store)."""
    made(Merging, store, None, None, None, None).merge_in(fork, parent_text, summary, usage)
