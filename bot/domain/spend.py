"""What Claude costs and what a channel spends: the price table, each call priced, a channel's spend
per day and month, and its monthly cap. Pure values and rules, no I/O.

## Prices

Prices are USD per million tokens, from Anthropic's pricing page
(https://platform.claude.com/docs/en/about-claude/pricing) and each model's page as they stood on
PRICES_AS_OF. Cache writes cost 1.25× the input price for the 5-minute cache and 2× for the 1-hour one,
reads 0.1× (https://platform.claude.com/docs/en/build-with-claude/prompt-caching); the API reports the
writes split by TTL (`cache_creation.ephemeral_5m_input_tokens` / `ephemeral_1h_input_tokens`), and each
part is priced at its rate. A model missing from the table has no cost (None, shown "n/a"), never a
guessed one. Ids match by prefix, so a dated id (`claude-haiku-4-5-20251001`) finds its model's row; the
longest prefix wins. These are estimates from reported usage, not an invoice.

## Spend

What a channel spends, as estimated from the usage the API reports (priced as above), and its monthly cap.

- Spend is kept per channel and UTC day; a month is the UTC calendar month, the sum of its days. Every
  answer, summary, draft and compaction adds to the day it was recorded on.
- A cap (USD per month, per channel; 0 or none: no cap) is reached once the month's spend is at it: new
  turns and forks then get a private answer and no model call, while merges and abandons go on (no fork is
  stranded). At NOTICE_SHARE of it the channel is told once. A raised cap or a new month lifts it at once,
  because both are read afresh at every turn.
- Under concurrency the cap holds by reservation: before a turn calls Claude it sets aside its worst case
  (`ceiling`: its input as counted plus max_tokens of output, at its model's price) on its channel's day, in
  one conditional update admitted only while the month's spend plus today's reservations is under the cap,
  and settles to the real cost when the answer is recorded (or releases it when the call fails). So turns
  sent at once pass the cap by one turn's worst case at most; a private fork counts against the channel it
  forks. A reservation a dead process left behind is given back by the sweep that interrupts its reply.
- These are estimates from reported usage at the price table's rates, not an invoice: every place that
  shows a number says so.
"""
from __future__ import annotations

from dataclasses import dataclass, replace
from datetime import datetime
from enum import Enum
from operator import attrgetter

from .context import ModelInput
from .model import Channel, Usage, summed


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

NOTICE_SHARE = 0.8
# an image or a document counted as this many input tokens: Claude reads an image of up to ~1.15 megapixels as
# at most ~1,600 tokens (platform.claude.com, Vision); a document's pages are unknown here, so it is a guess
FILE_TOKENS = 1_600
ESTIMATED = "estimated from the usage Claude's API reported"


@dataclass(frozen=True)
class Spent:
    """One period's figures, in micro-dollars."""

    cost_micros: int = 0
    fork_micros: int = 0  # the part spent inside forks and on their summaries
    uncached_micros: int = 0  # what the same calls would have cost without the prompt cache
    unpriced: int = 0  # calls by a model missing from the price table: not in the cost

    @property
    def saved_micros(self) -> int:
        """What the prompt cache saved (negative: it cost more than it saved)."""
        return self.uncached_micros - self.cost_micros

    def __add__(self, other: Spent) -> Spent:
        return summed(self, other)


@dataclass(frozen=True)
class SpendReport:
    today: Spent
    month: Spent
    month_name: str  # "December 2026"


def spent(usage: Usage, in_fork: bool) -> Spent:
    """What one recorded call adds to its channel's day."""
    return Spent(usage.cost_micros, usage.cost_micros if in_fork else 0, usage.uncached_micros, usage.unpriced)


@dataclass(frozen=True)
class Reservation:
    """A turn's worst case set aside on its channel's day until its answer is recorded; kept with its reply
    (`reply_id`), which gives it back once, whoever does: the answer's record, its failure, or the sweep that
    interrupts a reply whose process died."""

    channel: Channel
    day: str
    micros: int
    reply_id: int | None = None


def ceiling(model_input: ModelInput, max_tokens: int) -> Usage:
    """The most one call with this input may use: its input as counted (characters / ESTIMATED_CHARS_PER_TOKEN,
    FILE_TOKENS a file), all of it unread from the cache, and max_tokens of output."""
    from .context import ESTIMATED_CHARS_PER_TOKEN  # noqa: PLC0415 - see the import of ModelInput
    blocks = model_input.blocks  # counted by C loops (map): a 1,000-turn input's generator took 0.35 ms a request
    kinds = list(map(attrgetter("kind"), blocks))
    files = len(kinds) - kinds.count("text")
    chars = len(model_input.system) + len(model_input.late_system) + sum(map(len, map(attrgetter("text"), blocks)))
    if files:  # a file's `text` is its name, not words sent
        chars -= sum(len(b.text) for b in blocks if b.kind != "text")
    return Usage(input_tokens=chars // ESTIMATED_CHARS_PER_TOKEN + files * FILE_TOKENS, output_tokens=max_tokens)


def day_of(moment: datetime) -> str:
    return moment.strftime("%Y-%m-%d")


def month_of(moment: datetime) -> tuple[str, str]:
    """The UTC month holding `moment`: its first day and the next month's, as day keys."""
    following = (moment.year + 1, 1) if moment.month == 12 else (moment.year, moment.month + 1)
    return f"{moment.year:04d}-{moment.month:02d}-01", f"{following[0]:04d}-{following[1]:02d}-01"


class CapState(Enum):
    NONE = "none"  # no cap applies
    UNDER = "under"
    NEAR = "near"  # at NOTICE_SHARE of the cap or beyond: the channel is told once
    REACHED = "reached"


def cap_micros(cap_usd: float | None) -> int:
    return round(cap_usd * 1_000_000) if cap_usd and cap_usd > 0 else 0


def cap_state(month_micros: int | None, cap_usd: float | None) -> CapState:
    cap = cap_micros(cap_usd)
    if not cap or month_micros is None:
        return CapState.NONE
    if month_micros >= cap:
        return CapState.REACHED
    return CapState.NEAR if month_micros >= NOTICE_SHARE * cap else CapState.UNDER


def dollars(micros: int) -> str:
    """`$1.23`; an amount under a cent but above nothing shows as `<$0.01`."""
    if 0 < abs(micros) < 5_000:
        return "<$0.01" if micros > 0 else "-<$0.01"
    sign = "-" if micros < 0 else ""
    return f"{sign}${abs(micros) / 1_000_000:,.2f}"


def parse_cap(value: str) -> float:
    """A monthly cap as typed in the settings modal: dollars (`50`, `$50`, `12.5`), or empty / `none` for no
    cap here (0)."""
    cleaned = value.strip().lower().replace(",", "").replace("$", "").replace("usd", "").strip()
    if cleaned in ("", "none", "off", "0"):
        return 0.0
    try:
        cap = float(cleaned)
    except ValueError:
        raise ValueError("Enter the cap in US dollars, like 50 or 12.50 — or leave it empty for no cap.") from None
    if not cap > 0:  # NaN too
        raise ValueError("The cap must be a positive number of dollars, or empty for no cap.")
    if cap > 1_000_000:
        raise ValueError("Keep the cap under $1,000,000 a month — or leave it empty for no cap.")
    if cap < 0.01:  # rounded to cents it would be 0, which means no cap at all
        raise ValueError("The smallest cap is $0.01 a month — or leave it empty for no cap.")
    return round(cap, 2)
