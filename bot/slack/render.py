"""Pure rendering of Threadfork's Slack messages (Block Kit and Markdown)."""
from __future__ import annotations

import re

from ..domain.model import Fork, ForkStats, ForkStatus
from ..domain.merge import EXPIRY_ACTOR

MERGE_ACTION = "fork_merge"
ABANDON_ACTION = "fork_abandon"
CONTINUE_ACTION = "fork_budget_continue"
FORK_FROM_HERE = "fork_from_here"  # message shortcut callback ids, as in manifest.yml
MERGE_THIS_FORK = "merge_this_fork"
MARKDOWN_LIMIT = 12_000  # Slack's cap on markdown_text and markdown blocks
ZWSP = "\u200b"

_SPECIAL = re.compile(r"<!(channel|here|everyone|subteam\^[^>\s]*)([^>\s]*)>", re.IGNORECASE)
_AT_WORD = re.compile(r"@(channel|here|everyone)\b", re.IGNORECASE)


def neutralise(text: str) -> str:
    """Model output must never ping a channel or a group: break every special mention."""
    text = _SPECIAL.sub(lambda m: f"<{ZWSP}!{m.group(1)}{m.group(2)}>", text)
    return _AT_WORD.sub(lambda m: f"@{ZWSP}{m.group(1)}", text)


def permalink(channel_id: str, ts: str) -> str:
    return f"https://slack.com/archives/{channel_id}/p{ts.replace('.', '')}"


def fork_root_text(fork: Fork) -> str:
    return f"Fork #{fork.number}: {fork.topic or 'untitled'} ({fork.mode}, {fork.status})"


def fork_root_blocks(fork: Fork) -> list[dict]:
    if fork.mode.value == "inherit":
        context = f"inherited {fork.inherited.turns} turns (~{fork.inherited.tokens:,} tokens) from the channel"
    else:
        context = "fresh: no channel context"
    header = f"*🍴 Fork #{fork.number}* — {escape(fork.topic) or '_no topic_'}"
    origin = (f" · forked from <{permalink(fork.channel_id, fork.origin_ts)}|this message>"
              if fork.origin_ts else "")
    blocks = [
        {"type": "section", "text": {"type": "mrkdwn", "text": header}},
        {"type": "context", "elements": [{"type": "mrkdwn", "text":
            f"Mode `{fork.mode}` · {context}{origin} · opened by <@{fork.owner_id}>"}]},
    ]
    if fork.status is ForkStatus.OPEN:
        blocks.append({"type": "context", "elements": [{"type": "mrkdwn", "text": (
            "Talk in this thread — every message is a turn, no mention needed. "
            f"*Merge*: react ✅ here or in the thread, `/merge {fork.number}`, or `@Threadfork merge [guidance]`. "
            "*Abandon*: react ❌ here or `@Threadfork abandon`.")}]})
        blocks.append({"type": "actions", "block_id": f"fork_{fork.id}", "elements": [
            _button("Merge", MERGE_ACTION, fork.id, "primary"),
            _button("Abandon", ABANDON_ACTION, fork.id, "danger"),
        ]})
    else:
        blocks.append({"type": "section", "text": {"type": "mrkdwn", "text": _closed_line(fork)}})
    return blocks


def merge_header(fork: Fork, stats: ForkStats) -> str:
    who = "⏰ Threadfork merged idle" if fork.merged_by == EXPIRY_ACTOR else f"✅ <@{fork.merged_by}> merged"
    return (f"{who} fork #{fork.number}"
            + quoted_topic(fork)
            + f" — {stats.turns} turns, {stats.burned.total:,} tokens burned in the fork → "
              f"{stats.summary_tokens:,}-token summary added to the channel's context.")


def merge_blocks(fork: Fork, stats: ForkStats, summary: str) -> list[dict]:
    body = neutralise(summary)
    if len(body) > MARKDOWN_LIMIT:
        body = body[: MARKDOWN_LIMIT - 40] + "\n\n…(summary truncated for Slack)"
    return [
        {"type": "section", "text": {"type": "mrkdwn", "text": merge_header(fork, stats)}},
        {"type": "markdown", "text": body},
    ]


def humanize(seconds: float) -> str:
    for unit, size in (("day", 86400), ("hour", 3600), ("minute", 60)):
        if seconds >= size and seconds % size == 0 or seconds >= 2 * size:
            count = round(seconds / size)
            return f"{count} {unit}{'s' if count != 1 else ''}"
    count = round(seconds)
    return f"{count} second{'s' if count != 1 else ''}"


def reminder(fork: Fork, expiry_policy: str, expiry_seconds: float) -> tuple[str, list[dict]]:
    fate = "merged automatically" if expiry_policy == "merge" else "closed without merging"
    text = (f"⏰ Fork {fork.label} has been quiet for a while. Merge it, abandon it, or keep talking — after "
            f"{humanize(expiry_seconds)} without activity it will be {fate}.")
    return text, [{"type": "section", "text": {"type": "mrkdwn", "text": text}},
                  {"type": "actions", "elements": [_button("Merge", MERGE_ACTION, fork.id, "primary"),
                                                   _button("Abandon", ABANDON_ACTION, fork.id, "danger")]}]


def budget_notice(fork: Fork, burned: int, limit: int) -> tuple[str, list[dict]]:
    text = (f"🪙 Fork {fork.label} has burned {burned:,} tokens, past its budget of {limit:,}. "
            "Merge it, abandon it, or continue with a raised budget.")
    return text, [{"type": "section", "text": {"type": "mrkdwn", "text": text}},
                  {"type": "actions", "elements": [_button("Merge", MERGE_ACTION, fork.id, "primary"),
                                                   _button("Abandon", ABANDON_ACTION, fork.id, "danger"),
                                                   _button("Continue", CONTINUE_ACTION, fork.id, None)]}]


def _closed_line(fork: Fork) -> str:
    if fork.status is ForkStatus.MERGED:
        link = f" — <{permalink(fork.channel_id, fork.summary_ts)}|summary>" if fork.summary_ts else ""
        who = "automatically after sitting idle" if fork.merged_by == EXPIRY_ACTOR else f"by <@{fork.merged_by}>"
        return f"✅ *Merged* {who}{link}"
    if fork.status is ForkStatus.MERGING:
        return "⏳ *Merging…* Claude is writing the summary."
    return "❌ *Abandoned* — nothing was added to the channel's conversation."


def _button(label: str, action_id: str, fork_id: int, style: str | None) -> dict:
    button = {"type": "button", "text": {"type": "plain_text", "text": label}, "action_id": action_id,
              "value": str(fork_id)}
    return {**button, "style": style} if style else button


def quoted_topic(fork: Fork, missing: str = "") -> str:
    """ “the topic” after a fork's number, or `missing` when it has none."""
    return f" “{escape(fork.topic)}”" if fork.topic else missing


def escape(text: str) -> str:
    """Text for mrkdwn: &, < and > escaped and special mentions broken."""
    return neutralise(text.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;"))
