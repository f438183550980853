"""A channel's own settings (`/threadfork`): each one unset follows the environment's default.

`ChannelSettings` holds only what a channel's admins chose; `over` lays it over the defaults;
`changes` says, for the channel's notice, what a save changed. Pure values, no I/O.
"""
from __future__ import annotations

from dataclasses import dataclass, fields, replace

from . import text
from .connectors import Connector
from .durations import parse_duration
from .spend import parse_cap

INSTRUCTIONS_LIMIT = 3_000  # characters: one modal text box, and a system prompt kept short
MAX_BUDGET = 1_000_000_000  # tokens: far beyond any fork, and inside every database's integers
MAX_DURATION = 3650 * 86400.0  # ten years: beyond it no clock arithmetic is safe, and no fork waits that long
MIN_DURATION = 60.0  # a reminder or an expiry sooner than a minute would close forks people are still in


@dataclass(frozen=True)
class ChannelSettings:
    instructions: str | None = None
    model: str | None = None
    fork_token_budget: int | None = None  # 0: no budget here, whatever the default
    merge_policy: str | None = None  # anyone | owner
    enabled: bool | None = None
    idle_reminder: float | None = None  # seconds
    expiry: float | None = None
    tools: tuple[str, ...] | None = None  # () = no tools here
    merge_review: bool | None = None
    connectors: tuple[Connector, ...] | None = None  # () = none here; tokens are never part of settings
    monthly_spend_cap_usd: float | None = None  # 0: no cap here, whatever the default
    effort: str | None = None  # low | medium | high | default (the API's own): sent as output_config.effort
    memory_budget: int | None = None  # tokens the channel's memory may hold; 0: no budget
    memory_writers: str | None = None  # anyone | admins: who may write the channel's memory
    memory_tool: str | None = None  # off | ask | on: Claude's memory tool (ask: each write kept or undone by people)

    def over(self, defaults: ChannelSettings) -> ChannelSettings:
        """These settings where set, the defaults elsewhere."""
        return replace(defaults, **{f.name: getattr(self, f.name) for f in fields(self)
                                    if getattr(self, f.name) is not None})

    def beyond(self, defaults: ChannelSettings) -> ChannelSettings:
        """Only what differs from the defaults: a value saved equal to its default keeps following it."""
        return ChannelSettings(**{f.name: None if getattr(self, f.name) == getattr(defaults, f.name)
                                  else getattr(self, f.name) for f in fields(self)})


# a channel's settings where nobody chose otherwise and the environment sets nothing (Settings' defaults
# say the same): what the use cases follow when wired without Settings
BUILT_IN = ChannelSettings(
    instructions=None, model=None, tools=None,  # None: the Model port's own model and tools
    fork_token_budget=0,  # 0: no budget
    merge_policy="anyone",  # or "owner": only the fork's owner may merge or abandon it
    enabled=True, idle_reminder=24 * 3600.0, expiry=7 * 86400.0,
    merge_review=False,  # True: a merge gesture first posts a draft summary people approve, edit or redraft
    monthly_spend_cap_usd=0.0,  # 0: no cap
    effort="default",  # the API's own (high on Claude Sonnet 5.5): no output_config sent
    memory_budget=2_000, memory_writers="anyone", memory_tool="off",  # bot/domain/memory.py
)
EFFORTS = ("default", "low", "medium", "high")


LABELS = {"instructions": "instructions", "model": "model", "fork_token_budget": "fork token budget",
          "merge_policy": "merge policy", "enabled": "Threadfork here", "idle_reminder": "idle reminder",
          "expiry": "expiry", "tools": "tools", "merge_review": "summary review",
          "connectors": "connectors", "monthly_spend_cap_usd": "monthly spend cap", "effort": "effort",
          "memory_budget": "memory budget", "memory_writers": "who may write memory",
          "memory_tool": "Claude's memory tool"}


def shown(name: str, value) -> str:
    """A setting's value as people read it."""
    if name == "fork_token_budget":
        return f"{value:,} tokens" if value else "no budget"
    if name in ("enabled", "merge_review"):
        return "on" if value else "off"
    if name in ("idle_reminder", "expiry"):
        return _duration(value)
    if name == "tools":
        return ", ".join(value) if value else "none"
    if name == "connectors":
        return ", ".join(c.name for c in value) if value else "none"
    if name == "instructions":
        return "updated" if value else "removed"
    if name == "monthly_spend_cap_usd":
        return f"${value:,.2f} a month (estimated spend)" if value else "no cap"
    if name == "effort":
        return "the API's default" if value in (None, "default") else value
    if name == "memory_budget":
        return f"{value:,} tokens" if value else "no budget"
    if name == "memory_tool":
        return {"off": "off", "ask": "ask first", "on": "on"}.get(value, str(value))
    return str(value)


def changes(before: ChannelSettings, after: ChannelSettings) -> list[str]:
    """"model → claude-haiku-5-5"-style lines for what differs between two effective settings."""
    lines = []
    for f in fields(before):
        old, new = getattr(before, f.name), getattr(after, f.name)
        if old != new:
            lines.append(f"{LABELS[f.name]} {shown(f.name, new)}" if f.name == "instructions"
                         else f"{LABELS[f.name]} → {shown(f.name, new)}")
    return lines


def parse_budget(value: str) -> int:
    """A fork token budget as typed: a positive whole number (`200000`, `200,000`, `200k`), or empty (or
    `none`) for no budget, returned as 0."""
    cleaned = value.strip().lower().replace(",", "").replace("_", "").replace(" ", "")
    if cleaned in ("", "none", "off"):
        return 0
    scale = 1_000 if cleaned.endswith("k") else 1_000_000 if cleaned.endswith("m") else 1
    number = cleaned[:-1] if scale > 1 else cleaned
    try:
        budget = int(float(number) * scale) if scale > 1 else int(number)
    except (ValueError, OverflowError):
        raise ValueError("Enter a positive number of tokens, like 200000 or 200k — or leave it empty for "
                         "no budget.") from None
    if budget <= 0:
        raise ValueError("The budget must be a positive number of tokens.")
    if budget > MAX_BUDGET:
        raise ValueError(f"Keep the budget at most {MAX_BUDGET:,} tokens — or leave it empty for no budget.")
    return budget


def parse_positive_duration(value: str, what: str) -> float:
    try:
        seconds = parse_duration(value.strip())
    except (ValueError, TypeError):
        raise ValueError(f"Enter the {what} as a duration like 90m, 24h or 7d.") from None
    if seconds < MIN_DURATION:
        raise ValueError(f"The {what} must be at least a minute (1m).")
    if seconds > MAX_DURATION:
        raise ValueError(f"Keep the {what} under ten years (3650d).")
    return float(round(seconds))


def clean_instructions(value: str) -> str | None:
    cleaned = text.storable(value or "").strip()
    if len(cleaned) > INSTRUCTIONS_LIMIT:
        raise ValueError(f"Keep the instructions under {INSTRUCTIONS_LIMIT:,} characters.")
    return cleaned or None


def _duration(seconds: float) -> str:
    for unit, size in (("d", 86400), ("h", 3600), ("m", 60)):
        if seconds >= size and seconds % size == 0:
            return f"{int(seconds // size)}{unit}"
    return f"{seconds:g}s"


FormValue = str | list[str] | None  # what one input of the settings modal holds


@dataclass(frozen=True)
class Choices:
    """What the settings modal offers: the models (THREADFORK_MODELS) and the server tools."""

    models: tuple[str, ...]
    tools: tuple[str, ...]


def read_form(values: dict[str, FormValue], current: ChannelSettings,
              choices: Choices) -> tuple[ChannelSettings, dict[str, str]]:
    """The effective settings a submitted modal asks for (inputs it lacks keep `current`), and what it
    got wrong, keyed by block_id — Slack shows each under its input, and nothing is saved."""
    errors: dict[str, str] = {}
    chosen: dict = {}

    def take(name: str, parse) -> None:
        if name not in values or _same(values[name], form_value(name, getattr(current, name))):
            return  # left as shown: the value in effect stays, even one the modal would not take
        try:
            chosen[name] = parse(values[name])
        except ValueError as error:
            errors[name] = str(error)

    take("instructions", lambda v: clean_instructions(_text(v)))
    # the model in effect stays choosable after THREADFORK_MODELS dropped it: saving unchanged keeps it
    take("model", lambda v: _one_of(_text(v), offered_models(choices, current.model), "model"))
    take("fork_token_budget", lambda v: parse_budget(_text(v)))
    take("merge_policy", lambda v: _one_of(_text(v), ("anyone", "owner"), "merge policy"))
    take("enabled", lambda v: _switch(_text(v)))
    take("idle_reminder", lambda v: parse_positive_duration(_text(v), "idle reminder"))
    take("expiry", lambda v: parse_positive_duration(_text(v), "expiry"))
    take("tools", lambda v: _tools(v, choices.tools))
    take("merge_review", lambda v: _switch(_text(v)))
    take("monthly_spend_cap_usd", lambda v: parse_cap(_text(v)))
    take("effort", lambda v: _one_of(_text(v), EFFORTS, "effort"))
    take("memory_budget", lambda v: parse_budget(_text(v)))
    take("memory_writers", lambda v: _one_of(_text(v), ("anyone", "admins"), "memory writers"))
    take("memory_tool", lambda v: _one_of(_text(v), ("off", "ask", "on"), "memory tool"))
    asked = replace(current, **chosen)
    if not errors and ({"idle_reminder", "expiry"} & chosen.keys()) and asked.idle_reminder >= asked.expiry:
        errors["idle_reminder"] = "The reminder must come before the expiry, or it would never be sent."
    return asked, errors


def offered_models(choices: Choices, current: str | None) -> tuple[str, ...]:
    """The models a channel may choose: THREADFORK_MODELS, and the one in effect even if since dropped."""
    return choices.models if not current or current in choices.models else (*choices.models, current)


def form_value(name: str, value) -> FormValue:
    """A setting as its input in the settings modal holds it."""
    if name in ("idle_reminder", "expiry"):
        return shown(name, value)
    if name in ("enabled", "merge_review"):
        return "on" if value else "off"
    if name == "tools":
        return list(value or ())
    if name in ("fork_token_budget", "memory_budget"):
        return str(value) if value else None
    if name == "monthly_spend_cap_usd":  # dollars as typed: 1000000, 12345.67, 12.5 (never 1e+06)
        return f"{value:.2f}".rstrip("0").rstrip(".") if value else None
    return value or None


def _same(submitted: FormValue, shown_value: FormValue) -> bool:
    if isinstance(submitted, list) or isinstance(shown_value, list):
        return sorted(submitted or []) == sorted(shown_value or [])
    return (submitted or "").strip() == (shown_value or "").strip()


def _text(value: FormValue) -> str:
    if isinstance(value, list):
        raise ValueError("Choose one.")
    return value or ""


def _one_of(value: str, allowed: tuple[str, ...], what: str) -> str:
    if value not in allowed:
        raise ValueError(f"Unknown {what} “{text.topic(value, 60)}”: choose one of {', '.join(allowed)}.")
    return value


def _switch(value: str) -> bool:
    return _one_of(value, ("on", "off"), "choice") == "on"


def _tools(value: FormValue, allowed: tuple[str, ...]) -> tuple[str, ...]:
    names = value if isinstance(value, list) else [n for n in (value or "").split(",") if n.strip()]
    return tuple(_one_of(n.strip(), allowed, "tool") for n in names)
