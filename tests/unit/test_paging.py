"""Paging an answer that grows: append-only pages under the limit, fences balanced, nothing lost."""
import random

from bot.slack.paging import Pager, open_fence, utf8_size

ANSWER = ("Intro line\n```python\n" + "".join(f"value_{i} = {i} * 2  # ünïcode\n" for i in range(300))
          + "```\nBetween blocks.\n```\nplain fence\n```\n" + "Closing words. " * 200 + "\n")


def feed(pager, text, rng):
    shown: list[list[str]] = []
    position = 0
    while position < len(text):
        position = min(len(text), position + rng.randint(1, 120))
        shown.append(list(pager.update(text[:position])))
    return shown


def rejoin(pages):
    """Undo the fence closing and reopening at page breaks."""
    text, reopen = "", None
    for page in pages:
        body = page
        if reopen:
            assert body.startswith(reopen + "\n")
            body = body[len(reopen) + 1:]
        closes = page.endswith("```") and open_fence(page[:-3]) is not None
        reopen = open_fence(page[:-3]) if closes else None
        if closes:
            body = body[:-3]
        text += body
    return text


def test_pages_stay_under_the_byte_limit_with_balanced_fences():
    pager = Pager(2000, utf8_size)
    pages = pager.update(ANSWER)
    assert len(pages) > 3
    assert all(utf8_size(p) <= 2000 for p in pages)
    assert all(p.count("```") % 2 == 0 for p in pages)


def test_growing_text_never_changes_what_was_already_shown():
    rng = random.Random(7)
    history = feed(Pager(1500), ANSWER, rng)
    for before, after in zip(history, history[1:]):
        for i, page in enumerate(before[:-1]):
            assert after[i] == page  # sealed pages are final
        last = len(before) - 1
        grown = after[last]
        if grown.endswith("```") and len(after) > len(before):
            grown = grown[:-3]  # sealed with a closing fence
        assert grown.startswith(before[last])  # the open page only grows


def test_pages_rejoin_to_the_original_text():
    for seed in range(5):
        pager = Pager(1200)
        feed(pager, ANSWER, random.Random(seed))
        pages = pager.update(ANSWER, final=True)
        assert rejoin(pages) == ANSWER
        assert all(p.endswith(("\n", "```", " ")) for p in pages[:-1])  # breaks fall between lines or words


def test_a_short_answer_is_one_page():
    assert Pager(100).update("hello") == ["hello"]
