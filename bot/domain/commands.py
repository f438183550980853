"""Parse what people type: `/fork`, `/merge` and the in-thread `@Threadfork merge|abandon|fork`."""
from __future__ import annotations

import re
from dataclasses import dataclass

from .errors import ForkNotFound, UsageError
from .model import Mode

FORK_USAGE = (
    "*Threadfork commands*\n"
    "• `/fork [--fresh|--inherit] [topic]` — open a fork (a thread that is its own Claude session). "
    "`--inherit` (default) starts from the channel's conversation, `--fresh` from nothing. "
    "A topic is asked right away.\n"
    "• `/merge [N] [guidance]` — summarise fork N (default: your most recently active fork) into the channel.\n"
    "• `/forks` — this channel's open forks. `/context` — the conversation's size and what forks kept out of it.\n"
    "• `/threadfork` — admins: this channel's settings (instructions, model, budgets, tools). "
    "`/threadfork forget` — admins: delete everything Threadfork stored for this channel.\n"
    "• `@Threadfork remember <text>` — add to this channel's memory, which every session of it sees "
    "(in a fork's thread too); `/threadfork memory` — see, edit and delete it.\n"
    "• `/fork help` — this help.\n"
    "*In a fork's thread* every message is a turn, no mention needed. Merge with a ✅ reaction "
    "(on the root or any message of the thread), the Merge button or `@Threadfork merge [guidance]`; "
    "abandon with ❌ on the root, the Abandon button or `@Threadfork abandon`. "
    "`@Threadfork fork [--fresh|--inherit] [topic]` opens a fork of the fork; its summary comes back "
    "into this thread.\n"
    "*In the channel* mention `@Threadfork` to talk to the main conversation; in a DM just write. "
    "Mention it in any other thread and that thread becomes a fork. "
    "Message shortcuts: *Fork from here* on a channel message or a fork's message, *Merge this fork* in a "
    "fork's thread.\n"
    "*While Claude answers*, Slack's *Stop* (or the answer's Stop button) ends the answer where it is. "
    "Rate an answer or a summary with 👍 or 👎 under it. "
    "If an answer failed, react 🔁 to your message to try again.\n"
    "*Private forks*: write in the bot's DM while viewing a channel and the thread is a 🔒 fork of that "
    "channel only you see; merging it shows you the draft first, and only what you approve reaches the channel."
)

_FLAG_MODES = {"--fresh": Mode.FRESH, "--inherit": Mode.INHERIT}


@dataclass(frozen=True)
class ForkCommand:
    mode: Mode
    topic: str


@dataclass(frozen=True)
class HelpCommand:
    pass


@dataclass(frozen=True)
class MergeCommand:
    number: int | None
    guidance: str


@dataclass(frozen=True)
class ThreadCommand:
    verb: str  # "merge", "abandon", "fork" or "remember"
    guidance: str = ""  # merge guidance, or a fork's `[--fresh|--inherit] [topic]`


def parse_fork(text: str) -> ForkCommand | HelpCommand:
    words = text.strip().split(maxsplit=1)
    if words and words[0].lower() in ("help", "--help", "-h"):
        return HelpCommand()
    modes: list[Mode] = []
    rest = text.strip()
    while rest.startswith("-"):
        flag, _, rest = rest.partition(" ")
        rest = rest.strip()
        if flag not in _FLAG_MODES:
            raise UsageError(f"Unknown flag `{flag}`.\n\n{FORK_USAGE}")
        modes.append(_FLAG_MODES[flag])
    if len(set(modes)) > 1:
        raise UsageError(f"Choose one of `--fresh` or `--inherit`.\n\n{FORK_USAGE}")
    return ForkCommand(modes[0] if modes else Mode.INHERIT, rest)


def answered_at_once(command: str, text: str) -> str | None:
    """What a slash command is answered with in its acknowledgement, needing nothing stored or sent: `/fork
    help` its usage, `/fork` with a flag it does not know the usage and what was wrong; None for the rest.

    >>> answered_at_once("/fork", "help").startswith("*Threadfork commands*"), answered_at_once("/fork", "topic")
    (True, None)
    """
    if command != "/fork":
        return None
    try:
        return FORK_USAGE if isinstance(parse_fork(text), HelpCommand) else None
    except UsageError as error:
        return str(error)


_NUMBER = re.compile(r"#?([0-9]+)$")
NUMBER_DIGITS = 12  # more digits than any fork number can have: no such fork, whatever the rest


def parse_merge(text: str) -> MergeCommand:
    first, _, rest = text.strip().partition(" ")
    match = _NUMBER.match(first)
    if match:
        digits = match.group(1)
        if len(digits) > NUMBER_DIGITS:
            raise ForkNotFound(f"There is no fork #{digits[:NUMBER_DIGITS]}… in this channel.")
        return MergeCommand(int(digits), rest.strip())
    return MergeCommand(None, text.strip())


_THREAD_VERB = re.compile(r"^(merge|abandon|fork|remember)\b(.*)$", re.IGNORECASE | re.DOTALL)


def parse_thread_command(text: str) -> ThreadCommand | None:
    """`merge [guidance]`, `abandon`, `fork [--fresh|--inherit] [topic]` or `remember [--workspace] <text>` as the
    first word after the bot's mention."""
    match = _THREAD_VERB.match(text.strip())
    if not match:
        return None
    verb = match.group(1).lower()
    separators = " \t\n:,.!" if verb in ("fork", "remember") else " \t\n:,.!-"  # their flags start with "--"
    return ThreadCommand(verb, match.group(2).lstrip(separators).strip())


def strip_mention(text: str, bot_user_id: str | None) -> str:
    if not bot_user_id:
        return text.strip()
    return re.sub(rf"<@{re.escape(bot_user_id)}(\|[^>]*)?>", "", text).strip()


def mentions(text: str, bot_user_id: str | None) -> bool:
    return bool(bot_user_id) and re.search(rf"<@{re.escape(bot_user_id)}(\|[^>]*)?>", text) is not None
