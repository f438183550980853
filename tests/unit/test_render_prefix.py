"""The prefix memo: a session's next request renders only its new turns, and renders exactly what a fresh
render of the whole history gives, whatever changed (pure domain)."""
import random
from dataclasses import replace

from bot.domain import context
from bot.domain.context import render_turn
from bot.domain.context import in_context, rendered
from bot.domain.caching import PrefixMemo
from bot.domain.model import Role, Turn, TurnStatus


def reference(turns):
    """What rendering the whole history afresh gives."""
    return [block for turn in in_context(turns) for block in render_turn(turn)]


def user(seq, status=TurnStatus.ANSWERED, session=1):
    return Turn(session, seq, Role.USER, f"question {seq}", "UALICE01", "alice", status=status)


def answer(seq, status=TurnStatus.COMPLETE, session=1):
    return Turn(session, seq, Role.ASSISTANT, f"answer {seq}", status=status)


def compaction(seq, covers, session=1):
    return Turn(session, seq, Role.COMPACTION, f"summary up to {covers}", covers_seq=covers)


def test_a_growing_session_renders_as_a_fresh_render_would_at_every_turn():
    history: list[Turn] = []
    for seq in range(1, 60, 2):
        waiting = user(seq, TurnStatus.PENDING)
        assert rendered([*history, waiting]) == reference([*history, waiting])
        streaming = answer(seq + 1, TurnStatus.STREAMING)
        assert rendered([*history, waiting, streaming]) == reference([*history, waiting, streaming])
        history += [replace(waiting, status=TurnStatus.ANSWERED), answer(seq + 1)]
    assert rendered(history) == reference(history)


def test_the_settled_turns_are_remembered_and_the_next_request_starts_from_them():
    history = [t for seq in range(1, 200, 2) for t in (user(seq), answer(seq + 1))]
    rendered([*history, user(201, TurnStatus.PENDING)])
    remembered = context._settled_blocks.longest(history + [user(201)], len(history) + 1)
    assert remembered is not None and remembered[0] == len(history)  # all but the turn still waiting
    history += [user(201), answer(202)]
    again = rendered([*history, user(203, TurnStatus.PENDING)])
    assert again == reference([*history, user(203, TurnStatus.PENDING)])
    assert context._settled_blocks.longest(history, len(history))[0] == len(history)


def test_a_compaction_among_the_new_turns_replaces_what_it_covers():
    history = [t for seq in range(1, 40, 2) for t in (user(seq), answer(seq + 1))]
    rendered(history)
    compacted = [*history, compaction(41, covers=30), user(42, TurnStatus.PENDING)]
    assert rendered(compacted) == reference(compacted)
    assert "summary up to 30" in rendered(compacted)[0].text  # it opens the input
    later = [*compacted[:-1], user(42), answer(43), user(44, TurnStatus.PENDING)]
    assert rendered(later) == reference(later)
    pending_compaction = [*later[:-1], compaction(45, covers=43)]  # settled turns after a trailing pending one
    assert rendered(pending_compaction) == reference(pending_compaction)


def test_a_changed_earlier_turn_is_a_new_object_and_is_rendered_anew():
    history = [t for seq in range(1, 20, 2) for t in (user(seq), answer(seq + 1))]
    rendered(history)
    edited = [*history[:5], replace(history[5], text="answer 6, corrected"), *history[6:]]
    assert rendered(edited) == reference(edited)
    assert "answer 6, corrected" in [b.text for b in rendered(edited)]
    assert rendered(history[:7]) == reference(history[:7])  # a fork's inherited prefix: shorter, same objects


def test_random_histories_render_as_a_fresh_render_would():
    chance = random.Random(7)
    statuses = list(TurnStatus)
    for _ in range(200):
        turns: list[Turn] = []
        for seq in range(1, chance.randint(1, 30)):
            kind = chance.random()
            if kind < 0.1 and seq > 2:
                # now and then covering turns written after it too, so the rule is met by later turns as well
                turns.append(compaction(seq, covers=chance.randint(1, seq + 3)))
            else:
                make = user if kind < 0.55 else answer
                turns.append(make(seq, chance.choice(statuses)))
            if chance.random() < 0.3:
                assert rendered(turns) == reference(turns)
        assert rendered(turns) == reference(turns)


def test_the_prefix_memo_finds_the_longest_remembered_start_by_identity():
    a, b, c, d = (object() for _ in range(4))
    memo = PrefixMemo(per_start=2, budget=10)
    memo.remember([a, b], "ab")
    memo.remember([a, b, c], "abc")  # extends ab: replaces it
    memo.remember([a, d], "ad")
    assert memo.longest([a, b, c, d], 4) == (3, "abc")
    assert memo.longest([a, b, c, d], 2) is None  # abc is longer than the limit; ab was replaced
    assert memo.longest([a, d, b], 3) == (2, "ad")
    assert memo.longest([object(), b], 2) is None
    assert memo.size == 5


def test_the_prefix_memo_forgets_beyond_its_budget():
    memo = PrefixMemo(per_start=4, budget=4)
    first, second = [object(), object(), object()], [object(), object(), object()]
    memo.remember(first, 1)
    memo.remember(second, 2)
    assert memo.longest(first, 3) is None and memo.longest(second, 3) == (3, 2)
    assert memo.size == 3
