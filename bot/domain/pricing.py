"""What a model call cost, from the token usage the API reported and a small price table. Pure.

Prices are USD per million tokens, from Anthropic's pricing page
(https://platform.claude.com/docs/en/about-claude/pricing) and each model's page as they stood on
PRICES_AS_OF. Cache writes cost 1.25× the input price for the 5-minute cache and 2× for the 1-hour one,
reads 0.1× (https://platform.claude.com/docs/en/build-with-claude/prompt-caching); the API reports the
writes split by TTL (`cache_creation.ephemeral_5m_input_tokens` / `ephemeral_1h_input_tokens`), and each
part is priced at its rate. A model missing from the table has no cost (None, shown "n/a"), never a
guessed one. Ids match by prefix, so a dated id (`claude-haiku-4-5-20251001`) finds its model's row; the
longest prefix wins. These are estimates from reported usage, not an invoice.
"""
from __future__ import annotations

from dataclasses import dataclass, replace

from .model import Usage

PRICES_AS_OF = "2026-10-24"
PRICES_SOURCE = "https://platform.claude.com/docs/en/about-claude/pricing"
MICROS = 1_000_000  # costs are kept as whole millionths of a dollar


@dataclass(frozen=True)
class Price:
    input: float
    output: float
    cache_write: float  # 5-minute cache
    cache_read: float
    cache_write_1h: float  # 1-hour cache: 2× the input price
    # (prompt tokens, price): requests whose prompt — input, cache reads and writes — is larger pay this
    long_prompt: tuple[int, Price] | None = None

    def band(self, usage: Usage) -> Price:
        """The rates this call pays (a long prompt may pay another band, on every token)."""
        if self.long_prompt and usage.prompt_tokens > self.long_prompt[0]:
            return self.long_prompt[1]
        return self

    def of(self, usage: Usage) -> float:
        """USD for one call."""
        price = self.band(usage)
        hour = min(usage.cache_write_1h_tokens, usage.cache_write_tokens)
        return (usage.input_tokens * price.input + usage.output_tokens * price.output
                + (usage.cache_write_tokens - hour) * price.cache_write + hour * price.cache_write_1h
                + usage.cache_read_tokens * price.cache_read) / MICROS

    def uncached(self, usage: Usage) -> float:
        """USD the same call would have cost without the prompt cache: every prompt token at the input price."""
        price = self.band(usage)
        return (usage.prompt_tokens * price.input + usage.output_tokens * price.output) / MICROS


PRICES: dict[str, Price] = {
    "claude-fable-5-1": Price(10.00, 50.00, 12.50, 0.25, 20.00),
    "claude-fable-5": Price(10.00, 50.00, 12.50, 1.00, 20.00),
    "claude-opus-5-5": Price(4.00, 20.00, 5.00, 0.20, 8.00),
    "claude-opus-5": Price(5.00, 25.00, 6.25, 0.50, 10.00),
    "claude-opus-4-8": Price(5.00, 25.00, 6.25, 0.50, 10.00),
    "claude-opus-4-7": Price(5.00, 25.00, 6.25, 0.50, 10.00),
    "claude-opus-4-6": Price(5.00, 25.00, 6.25, 0.50, 10.00),
    "claude-opus-4-5": Price(5.00, 25.00, 6.25, 0.50, 10.00),
    "claude-sonnet-5-5": Price(2.00, 10.00, 2.50, 0.10, 4.00),  # cache reads cut from $0.20 on 2026-10-07
    "claude-sonnet-5": Price(2.00, 10.00, 2.50, 0.20, 4.00),
    "claude-sonnet-4-6": Price(3.00, 15.00, 3.75, 0.30, 6.00),
    "claude-sonnet-4-5": Price(3.00, 15.00, 3.75, 0.30, 6.00),
    "claude-haiku-5-5": Price(0.10, 0.50, 0.125, 0.01, 0.20,
                              long_prompt=(100_000, Price(0.50, 2.50, 0.625, 0.05, 1.00))),
    "claude-haiku-4-5": Price(1.00, 5.00, 1.25, 0.10, 2.00),
}


@dataclass(frozen=True)
class Traits:
    """What a model does with a request's settings (each model's page on platform.claude.com, and for Claude Sonnet
    5.5 its migration guide): whether it thinks when the request has no `thinking` field (its thinking is billed as
    output and shares `max_tokens` with the text), which settings it answers 400 (`budget`: thinking budgets,
    `disabled`: thinking off, `sampling`: non-default temperature/top_p/top_k, `prefill`: a final assistant
    message, `forced_tool_choice`), whether it takes `output_config.effort`, and whether it takes
    mid-conversation system messages (a `{"role": "system"}` message in `messages`:
    platform.claude.com/docs/en/build-with-claude/mid-conversation-system-messages; other models answer 400)."""

    thinks: bool
    refuses: frozenset[str] = frozenset()
    effort: bool = True
    system_messages: bool = False


_ALL_REFUSED = frozenset({"budget", "disabled", "sampling", "prefill", "forced_tool_choice"})
_ADAPTIVE = frozenset({"budget", "sampling"})
TRAITS: dict[str, Traits] = {
    "claude-fable-5": Traits(True, _ALL_REFUSED),
    "claude-opus-5-5": Traits(True, _ALL_REFUSED),
    "claude-opus-5": Traits(True, _ADAPTIVE),
    "claude-opus-4-8": Traits(False, _ADAPTIVE, system_messages=True),
    "claude-opus-4-7": Traits(False, _ADAPTIVE),
    "claude-opus-4-6": Traits(False),
    "claude-opus-4-5": Traits(False),
    "claude-sonnet-5-5": Traits(True, _ALL_REFUSED),
    "claude-sonnet-5": Traits(True, _ADAPTIVE),
    "claude-sonnet-4-6": Traits(False),
    "claude-sonnet-4-5": Traits(False, effort=False),
    "claude-haiku-5-5": Traits(False),
    "claude-haiku-4-5": Traits(False, effort=False),
}


def traits_of(model: str | None) -> Traits | None:
    """The model's marks (by id prefix, as prices); None for a model the table lacks."""
    matches = [key for key in TRAITS if model and (model == key or model.startswith(key + "-"))]
    return TRAITS[max(matches, key=len)] if matches else None


def takes_effort(model: str | None) -> bool:
    """`output_config.effort` is sent to a model the table says takes it, and to one it does not know (a newer
    model; the API's 400 would say otherwise)."""
    traits = traits_of(model)
    return traits is None or traits.effort


def takes_system_messages(model: str | None) -> bool:
    """Only a model the table says takes them gets a mid-conversation system message (unknown: no — a 400 would
    lose the answer, where the other way only costs a prefix written again)."""
    traits = traits_of(model)
    return traits is not None and traits.system_messages


def price_of(model: str | None) -> Price | None:
    matches = [key for key in PRICES if model and (model == key or model.startswith(key + "-"))]
    return PRICES[max(matches, key=len)] if matches else None


def cost(model: str, usages: list[Usage]) -> float | None:
    """USD for these API calls (each priced on its own: a long prompt may change the rate)."""
    price = price_of(model)
    return None if price is None else sum(price.of(u) for u in usages)


def priced(model: str | None, usage: Usage) -> Usage:
    """One call's usage with its cost and its cost without caching, in micro-dollars; a model the table
    lacks is counted as unpriced (no cost is guessed)."""
    price = price_of(model)
    if price is None:
        return replace(usage, cost_micros=0, uncached_micros=0, unpriced=1)
    return replace(usage, cost_micros=round(price.of(usage) * MICROS),
                   uncached_micros=round(price.uncached(usage) * MICROS), unpriced=0)
