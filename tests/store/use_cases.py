"""The use cases whose unit of work the contract tests drive on each store, made as bot/app.py makes them."""
from bot.app import made
from bot.services.merging import Merging


def merge_in(store, fork, parent_text: str, summary: str, usage) -> None:
    """Merging.merge_in: merged, the summary in the parent and its cost counted, as one unit of work (it needs
    none of Merging's collaborators beyond the store)."""
    made(Merging, store, None, None, None, None).merge_in(fork, parent_text, summary, usage)


def record_draft(store, fork, number: int, text: str, seq: int, usage, user_id: str, owner: str) -> bool:
    """Reviews.record: the draft live and its cost counted, as one unit of work."""
    from bot.services.reviews import Reviews

    return made(Reviews, store, None, None, None, None, None, None).record(fork, number, text, seq, usage, user_id, owner)


def compact(store, session_id: int, summary: str, usage, compact_at: int = 1):
    """Compactor.compact with Claude scripted to answer `summary` with `usage`: the compaction and its cost, as one
    unit of work (a budget of `compact_at` tokens leaves only the newest two turns verbatim)."""
    from bot.services.compaction import Compactor
    from bot.services.policy import Policy

    from ..fakes.ports import Answer, ScriptedModel

    model = ScriptedModel()
    model.answer(Answer(summary, usage=usage))
    return made(Compactor, store, model, Policy.knobs(compact_at=compact_at)).compact(session_id)
