"""How long the prompt cache keeps what a request marks (THREADFORK_CACHE_TTL): pure rules, no I/O.

The Messages API keeps the prefix up to a `cache_control` breakpoint for 5 minutes (written at 1.25× the
input price) or, with `"ttl": "1h"`, for an hour (written at 2×); a read costs 0.1× either way and
refreshes the entry (platform.claude.com, "Prompt caching"). A channel's conversation stops for
meetings: a 5-minute entry then expires between two turns and the next turn writes the whole prefix again.

- `5m`: every breakpoint is the API's default, with no `ttl` field (the bytes Threadfork always sent).
- `1h`: every breakpoint carries `"ttl": "1h"`.
- `auto` (the default): each breakpoint follows the pace of the session whose turns end there — the
  channel's conversation for an inherited prefix, a fork for its own turns — measured from the Slack
  timestamps of people's messages (when they were written, not when the bot saw them): the TTL that
  would have cost least over the session's recent gaps (`paced`).
- Within a request a 1-hour breakpoint never follows a 5-minute one (the API refuses that order):
  `settled` lengthens the earlier ones instead, since a later prefix that lives an hour is worth keeping
  the shorter ones under it as long.
- The choice never changes the bytes of a cached prefix, only the `ttl` beside them, so an inherited fork
  still reads its parent's cache whatever either one chose.
"""
from __future__ import annotations

from collections.abc import Sequence
from enum import StrEnum

from .model import Role, Turn

FIVE_MINUTES = 300.0  # seconds a 5-minute entry lives after its last use
ONE_HOUR = 3600.0
# what the whole cached prefix costs at the next turn, in multiples of the input price (platform.claude.com)
READ, WRITE_5M, WRITE_1H = 0.1, 1.25, 2.0
RECENT = 8  # gaps weighed: enough to remember the last pause across a burst of quick turns


class Ttl(StrEnum):
    FIVE_MINUTES = "5m"
    ONE_HOUR = "1h"


class CacheMode(StrEnum):
    AUTO = "auto"
    FIVE_MINUTES = "5m"
    ONE_HOUR = "1h"


def gaps(timestamps: Sequence[float]) -> list[float]:
    """Seconds between consecutive messages, the most recent RECENT (timestamps in the order written)."""
    return [later - earlier for earlier, later in zip(timestamps, timestamps[1:])][-RECENT:]


def paced(recent_gaps: Sequence[float]) -> Ttl:
    """The TTL that would have cost least over these gaps: each gap read at 0.1× if the entry outlived
    it, else the prefix written again at that TTL's rate. A tie (every gap under 5 minutes, or none
    known) is 5 minutes, whose writes cost less.

    >>> paced([60, 60, 1200, 60])  # a burst, a 20-minute meeting, a burst
    <Ttl.ONE_HOUR: '1h'>
    """
    five = sum(READ if gap <= FIVE_MINUTES else WRITE_5M for gap in recent_gaps)
    hour = sum(READ if gap <= ONE_HOUR else WRITE_1H for gap in recent_gaps)
    return Ttl.ONE_HOUR if hour < five else Ttl.FIVE_MINUTES


def chosen(mode: CacheMode, recent_gaps: Sequence[float]) -> Ttl:
    """A breakpoint's TTL under the configured mode."""
    if mode is CacheMode.AUTO:
        return paced(recent_gaps)
    return Ttl(mode.value)


def one_off(mode: CacheMode) -> Ttl:
    """The TTL of a prefix read once and never again (a merge's or a compaction's own request): its
    writes cost least at 5 minutes, unless the operator asked for an hour everywhere."""
    return Ttl.ONE_HOUR if mode is CacheMode.ONE_HOUR else Ttl.FIVE_MINUTES


def settled(ttls: Sequence[Ttl]) -> list[Ttl]:
    """Breakpoints' TTLs in request order, none shorter than one after it (the API's order rule).

    >>> settled([Ttl.FIVE_MINUTES, Ttl.ONE_HOUR, Ttl.FIVE_MINUTES])
    [<Ttl.ONE_HOUR: '1h'>, <Ttl.ONE_HOUR: '1h'>, <Ttl.FIVE_MINUTES: '5m'>]
    """
    out, longest = [], Ttl.FIVE_MINUTES
    for ttl in reversed(ttls):
        longest = Ttl.ONE_HOUR if Ttl.ONE_HOUR in (ttl, longest) else Ttl.FIVE_MINUTES
        out.append(longest)
    return out[::-1]


def written_at(slack_ts: str | None) -> float | None:
    """A Slack message ts as seconds since the epoch (None when absent or not a ts)."""
    try:
        return float(slack_ts) if slack_ts else None
    except ValueError:
        return None


def closing(mode: CacheMode, turns: Sequence[Turn]) -> Ttl:
    """The TTL of the breakpoint that closes these turns of one session: by when people wrote them."""
    if mode is not CacheMode.AUTO:
        return chosen(mode, ())
    written = [at for turn in turns if turn.role is Role.USER and turn.author_id
               and (at := written_at(turn.slack_ts)) is not None]
    return paced(gaps(written[-RECENT - 1:]))


def longest(*ttls: Ttl) -> Ttl:
    return Ttl.ONE_HOUR if Ttl.ONE_HOUR in ttls else Ttl.FIVE_MINUTES
