"""How long the prompt cache keeps what a request marks (THREADFORK_CACHE_TTL): pure rules, no I/O.

The Messages API keeps the prefix up to a `cache_control` breakpoint for 5 minutes (written at 1.25× the
input price) or, with `"ttl": "1h"`, for an hour (written at 2×); a read costs 0.1× either way and
refreshes the entry (platform.claude.com, "Prompt caching"). A channel's conversation stops for
meetings: a 5-minute entry then expires between two turns and the next turn writes the whole prefix again.

A request's breakpoints are of two kinds. The *moving* one sits on its final block and moves on with
every turn. The *settled* ones close history that no later turn changes: an inherited prefix (the
channel's turns up to a fork point, a parent fork's), and a session's own turns before the ones being
answered now. Under each mode:

- `5m`: every breakpoint is the API's default, with no `ttl` field, and there is no settled-history
  breakpoint of the session's own (the bytes Threadfork always sent).
- `1h`: every breakpoint carries `"ttl": "1h"`.
- `auto` (the default): the moving breakpoint takes the TTL that would have cost least over the
  session's recent gaps between people's messages, measured from their Slack timestamps (when they were
  written, not when the bot saw them): `paced`. Settled history is kept an hour (`lasting`) — a fork
  opened after a meeting, or the session itself after one, then reads it back at 0.1× instead of writing
  it again — unless its session's messages come more than an hour apart, when no cache outlives the gap.
  When the moving breakpoint is the hour too, no separate one is needed for the session's own history.
- Within a request a 1-hour breakpoint never follows a 5-minute one (the API refuses that order):
  `settled` lengthens the earlier ones instead.
- The choice never changes the bytes of a cached prefix, only the `cache_control` beside them, so an
  inherited fork still reads its parent's cache whatever either one chose.
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


def outlived(recent_gaps: Sequence[float]) -> bool:
    """Every recent gap was longer than even the hour cache lives."""
    return bool(recent_gaps) and min(recent_gaps) > ONE_HOUR


def chosen(mode: CacheMode, recent_gaps: Sequence[float]) -> Ttl:
    """The moving breakpoint's TTL under the configured mode."""
    if mode is CacheMode.AUTO:
        return paced(recent_gaps)
    return Ttl(mode.value)


def kept(mode: CacheMode, recent_gaps: Sequence[float]) -> Ttl:
    """A settled breakpoint's TTL under the configured mode."""
    if mode is CacheMode.AUTO:
        return Ttl.FIVE_MINUTES if outlived(recent_gaps) else Ttl.ONE_HOUR
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
    out, longest_after = [], Ttl.FIVE_MINUTES
    for ttl in reversed(ttls):
        longest_after = longest(ttl, longest_after)
        out.append(longest_after)
    return out[::-1]


def written_at(slack_ts: str | None) -> float | None:
    """A Slack message ts as seconds since the epoch (None when absent or not a ts)."""
    try:
        return float(slack_ts) if slack_ts else None
    except ValueError:
        return None


def pace(turns: Sequence[Turn]) -> list[float]:
    """The recent gaps between people's messages among these turns of one session (read from the end: a
    long session costs no more than a short one)."""
    written: list[float] = []
    for turn in reversed(turns):
        if turn.role is Role.USER and turn.author_id and (at := written_at(turn.slack_ts)) is not None:
            written.append(at)
            if len(written) > RECENT:
                break
    return gaps(written[::-1])


def closing(mode: CacheMode, turns: Sequence[Turn]) -> Ttl:
    """The moving breakpoint's TTL for a session whose turns these are."""
    return chosen(mode, pace(turns) if mode is CacheMode.AUTO else ())


def lasting(mode: CacheMode, turns: Sequence[Turn]) -> Ttl:
    """The TTL of a settled breakpoint closing these turns of one session."""
    return kept(mode, pace(turns) if mode is CacheMode.AUTO else ())


def own_history(mode: CacheMode, turns: Sequence[Turn], moving: Ttl) -> Ttl | None:
    """The TTL of a breakpoint on the session's own settled history, if one is worth having: only under
    `auto`, only when the moving breakpoint lives shorter than that history would."""
    if mode is not CacheMode.AUTO:
        return None
    ttl = lasting(mode, turns)
    return ttl if ttl is Ttl.ONE_HOUR and moving is Ttl.FIVE_MINUTES else None


def longest(*ttls: Ttl) -> Ttl:
    return Ttl.ONE_HOUR if Ttl.ONE_HOUR in ttls else Ttl.FIVE_MINUTES
