"""What a run cost, from the token usage the API reported and a small price table.

Prices are USD per million tokens, from Anthropic's pricing page
(https://platform.claude.com/docs/en/about-claude/pricing) as it stood on PRICES_AS_OF. Threadfork's
cache breakpoints use the default 5-minute cache, so cache writes are priced at the 5-minute rate.
A model missing from the table has no cost (None), never a guessed one. Ids match by prefix, so a
dated id (`claude-haiku-4-5-20251001`) finds its model's row; the longest prefix wins.
"""
from __future__ import annotations

from dataclasses import dataclass

from ..domain.model import Usage

PRICES_AS_OF = "2026-10-24"
PRICES_SOURCE = "https://platform.claude.com/docs/en/about-claude/pricing"


@dataclass(frozen=True)
class Price:
    input: float
    output: float
    cache_write: float  # 5-minute cache
    cache_read: float
    # (prompt tokens, price): requests whose prompt — input, cache reads and writes — is larger pay this
    long_prompt: tuple[int, Price] | None = None

    def of(self, usage: Usage) -> float:
        price = self
        if self.long_prompt and usage.prompt_tokens > self.long_prompt[0]:
            price = self.long_prompt[1]
        return (usage.input_tokens * price.input + usage.output_tokens * price.output
                + usage.cache_write_tokens * price.cache_write + usage.cache_read_tokens * price.cache_read) / 1e6


PRICES: dict[str, Price] = {
    "claude-fable-5-1": Price(10.00, 50.00, 12.50, 0.25),
    "claude-fable-5": Price(10.00, 50.00, 12.50, 1.00),
    "claude-opus-5-5": Price(4.00, 20.00, 5.00, 0.20),
    "claude-opus-5": Price(5.00, 25.00, 6.25, 0.50),
    "claude-opus-4-8": Price(5.00, 25.00, 6.25, 0.50),
    "claude-opus-4-7": Price(5.00, 25.00, 6.25, 0.50),
    "claude-opus-4-6": Price(5.00, 25.00, 6.25, 0.50),
    "claude-opus-4-5": Price(5.00, 25.00, 6.25, 0.50),
    "claude-sonnet-5-5": Price(2.00, 10.00, 2.50, 0.10),  # cache reads cut from $0.20 on 2026-10-07
    "claude-sonnet-5": Price(2.00, 10.00, 2.50, 0.20),
    "claude-sonnet-4-6": Price(3.00, 15.00, 3.75, 0.30),
    "claude-sonnet-4-5": Price(3.00, 15.00, 3.75, 0.30),
    "claude-haiku-5-5": Price(0.10, 0.50, 0.125, 0.01, long_prompt=(100_000, Price(0.50, 2.50, 0.625, 0.05))),
    "claude-haiku-4-5": Price(1.00, 5.00, 1.25, 0.10),
}


def price_of(model: str) -> Price | None:
    matches = [key for key in PRICES if model == key or model.startswith(key + "-")]
    return PRICES[max(matches, key=len)] if matches else None


def cost(model: str, usages: list[Usage]) -> float | None:
    """USD for these API calls (each priced on its own: a long prompt may change the rate)."""
    price = price_of(model)
    return None if price is None else sum(price.of(u) for u in usages)
