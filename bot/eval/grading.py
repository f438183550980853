"""Deterministic grading: an answer is correct when it matches every one of its question's patterns.

Patterns are regular expressions, matched case-insensitively anywhere in the answer after light
normalisation (Markdown emphasis and code marks removed, Unicode spaces and dashes made plain), so
`**€186 500**` and `€186,500` read alike. No model judges another: the result is the same on every
run and anyone can check it from the saved answers.
"""
from __future__ import annotations

import re
from dataclasses import dataclass

_MARKUP = re.compile(r"[*_`]")
_SPACES = re.compile(r"[\u00a0\u2007\u2009\u202f\u2002\u2003]")
_DASHES = re.compile(r"[\u2010\u2011\u2012\u2013\u2014\u2212]")
_QUOTES = {"\u2018": "'", "\u2019": "'", "\u201c": '"', "\u201d": '"'}


@dataclass(frozen=True)
class Grade:
    passed: bool
    missing: tuple[str, ...]  # the patterns the answer did not match


def normalise(text: str) -> str:
    text = _SPACES.sub(" ", _DASHES.sub("-", _MARKUP.sub("", text)))
    for fancy, plain in _QUOTES.items():
        text = text.replace(fancy, plain)
    return re.sub(r"[ \t]+", " ", text)


def grade(question, answer: str) -> Grade:
    """`question` has `expect`: the patterns a correct answer must all match."""
    text = normalise(answer)
    missing = tuple(p for p in question.expect if not re.search(p, text, re.IGNORECASE))
    return Grade(not missing, missing)
