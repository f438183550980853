"""What a channel spends, as estimated from the usage the API reports (priced by pricing.py), and its
monthly cap. Pure values and rules, no I/O.

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

from dataclasses import dataclass
from datetime import datetime
from enum import Enum

from typing import TYPE_CHECKING

from .model import Channel, Usage, summed

if TYPE_CHECKING:  # context.py reads settings.py, which reads this module
    from .context import ModelInput

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
    chars = len(model_input.system) + len(model_input.late_system) + sum(len(b.text) for b in model_input.blocks if b.kind == "text")
    files = sum(1 for b in model_input.blocks if b.kind != "text")
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
