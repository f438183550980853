"""Pure rendering of Threadfork's Slack messages (Block Kit and Markdown).

Every payload is one Slack accepts, whatever the topic (up to the 4,000 characters of a slash
command) or the summary: a topic is shown through `bot.domain.text.topic` only — escaped, and
shortened to what its block allows (a section holds 3,000 characters, all markdown blocks of a
message 12,000) — and kept whole in a fallback `text` (40,000). Claude's summary is neutralised
(`bot.domain.text.neutralise`): it cannot ping or phish.
"""
from __future__ import annotations

import json

from ..domain import text as safe
from ..domain.merge import EXPIRY_ACTOR, split_conflicts, worth_remembering
from ..domain.model import Fork, ForkStats, ForkStatus
from ..domain.text import NameOf
from .reply import feedback_block  # under a summary as under an answer

MERGE_ACTION = "fork_merge"
ABANDON_ACTION = "fork_abandon"
CONTINUE_ACTION = "fork_budget_continue"
FORK_FROM_HERE = "fork_from_here"  # message shortcut callback ids, as in manifest.yml
MERGE_THIS_FORK = "merge_this_fork"
MARKDOWN_LIMIT = 12_000  # Slack's cap on markdown_text, and on all markdown blocks of one message together
SECTION_LIMIT = 3_000  # characters of a section's text
MERGE_TOPIC = 300  # characters of a topic in the merge post's header: the summary needs the room
MAX_LISTED_CHILDREN = 20  # a refusal's buttons: two blocks each, well inside Slack's 50 per message
EMPTY_SUMMARY = "_(Claude returned an empty summary.)_"


def permalink(channel_id: str, ts: str) -> str:
    return f"https://slack.com/archives/{channel_id}/p{ts.replace('.', '')}"


def fork_root_text(fork: Fork) -> str:
    """The root's fallback text (notifications, search): the whole topic."""
    origin = f" — from fork #{fork.parent_number}" if fork.nested else ""
    return f"Fork #{fork.number}{origin}: {safe.topic(fork.topic) or 'untitled'} ({fork.mode}, {fork.status})"


def parent_thread(fork: Fork) -> str:
    """A nested fork's parent, linked to its thread."""
    if fork.parent_root_ts:
        return f"<{permalink(fork.channel_id, fork.parent_root_ts)}|fork #{fork.parent_number}>"
    return f"fork #{fork.parent_number}"


def fork_root_blocks(fork: Fork) -> list[dict]:
    source = parent_thread(fork) if fork.nested else "the channel"
    if fork.mode.value == "inherit":
        context = f"inherited {fork.inherited.turns} turns (~{fork.inherited.tokens:,} tokens) from {source}"
    else:
        context = f"fresh: no context from {source}"
    lead = f"*🍴 Fork #{fork.number}* — " + (f"from {parent_thread(fork)} — " if fork.nested else "")
    header = lead + (safe.topic(fork.topic, SECTION_LIMIT - len(lead)) or "_no topic_")
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
            button("Merge", MERGE_ACTION, fork.id, "primary"),
            button("Abandon", ABANDON_ACTION, fork.id, "danger"),
        ]})
    else:
        blocks.append({"type": "section", "text": {"type": "mrkdwn", "text": _closed_line(fork)}})
    return blocks


def merge_header(fork: Fork, stats: ForkStats, topic_limit: int | None = None) -> str:
    """Who merged which fork and what it cost; the whole topic unless `topic_limit` says otherwise."""
    who = "⏰ Threadfork merged idle" if fork.merged_by == EXPIRY_ACTOR else f"✅ <@{fork.merged_by}> merged"
    into = f"fork #{fork.parent_number}'s context" if fork.nested else "the channel's context"
    edited = f" (summary edited by <@{fork.summary_edited_by}>)" if fork.summary_edited_by else ""
    return (f"{who} fork #{fork.number}"
            + quoted_topic(fork, limit=topic_limit)
            + f" — {stats.turns} turns, {stats.burned.total:,} tokens burned in the fork → "
              f"{stats.summary_tokens:,}-token summary added to {into}{edited}.")


def merge_blocks(fork: Fork, stats: ForkStats, summary: str, name_of: NameOf | None = None) -> list[dict]:
    header = {"type": "section", "text": {"type": "mrkdwn", "text": merge_header(fork, stats, MERGE_TOPIC)}}
    return [header, *summary_blocks(summary, name_of), *remember_blocks(fork, summary), feedback_block()]


REMEMBER_ACTION = "threadfork_memory_remember"


def remember_blocks(fork: Fork, summary: str) -> list[dict]:
    """The summary's conclusions worth remembering, each with a Remember button that adds it to the channel's
    memory (its value: the fork's id and the conclusion, for whoever presses it)."""
    items = worth_remembering(summary)
    if not items:
        return []
    blocks = [{"type": "context", "elements": [{"type": "mrkdwn", "text": "🧠 *Worth remembering* — add any to this "
                                                "channel's memory, which every session here sees:"}]}]
    for n, item in enumerate(items):
        shown = safe.inert(item, 600)
        blocks.append({**section(f"• {shown}"), "block_id": f"remember_{fork.id}_{n}",
                       "accessory": button("Remember", REMEMBER_ACTION, json.dumps({"f": fork.id, "t": item[:1_000]}))})
    return blocks


def private_merge(fork: Fork, summary: str, name_of: NameOf | None = None) -> tuple[str, list[dict]]:
    """A private fork's approved summary in its channel: whose private fork it came from, and the summary —
    not its topic, number or size (those stayed in its owner's DM)."""
    edited = f", edited by <@{fork.summary_edited_by}>" if fork.summary_edited_by else ""
    header = f"🔒 From <@{fork.owner_id}>'s private fork — the summary they approved{edited}:"
    return header, [section(header), *summary_blocks(summary, name_of), *remember_blocks(fork, summary),
                    feedback_block()]


def private_intro(fork: Fork, channel_name: str | None) -> tuple[str, list[dict]]:
    """The first note in a private fork's DM thread, with its Merge into #channel and Abandon buttons."""
    text = (f"🔒 *Private fork of <#{fork.private_of}>* — this thread starts from its conversation "
            f"({fork.inherited.turns} turns, ~{fork.inherited.tokens:,} tokens) and only you see it. Every message "
            "here is a turn. Nothing reaches the channel until you merge: I'll show you the summary first, and "
            "only the version you approve is posted there (saying it came from your private fork). Abandoning "
            "shares nothing.")
    where = f"#{channel_name}" if channel_name else "the channel"
    merge_label = f"Merge into {where}"
    if len(merge_label) > 75:  # a button's text holds 75 characters
        merge_label = merge_label[:74] + "…"
    return text, [section(text), {"type": "actions", "block_id": f"private_{fork.id}", "elements": [
        button(merge_label, MERGE_ACTION, fork.id, "primary"), button("Abandon", ABANDON_ACTION, fork.id, "danger")]}]


def summary_blocks(summary: str, name_of: NameOf | None = None) -> list[dict]:
    """A summary as Slack shows it: its body in a markdown block, its conflicts in a section of their own
    (so nobody reads past a contradiction with an earlier merge)."""
    summary, conflicts = split_conflicts(summary)
    body = safe.neutralise(summary, name_of) if summary.strip() else EMPTY_SUMMARY
    warnings = safe.neutralise("\n".join(conflicts), name_of)[: SECTION_LIMIT - 20] if conflicts else ""
    if len(body) + len(warnings) > MARKDOWN_LIMIT:
        body = body[: MARKDOWN_LIMIT - len(warnings) - 40] + "\n\n…(summary truncated for Slack)"
    blocks = [{"type": "markdown", "text": body}]
    if warnings:
        blocks.append({"type": "section", "text": {"type": "mrkdwn", "text": warnings}})
    return blocks


def children_refusal(reason: str, children: list[Fork]) -> tuple[str, list[dict]]:
    """Why a fork can't close yet, and each open child fork with its own Merge and Abandon buttons."""
    blocks: list[dict] = [{"type": "section", "text": {"type": "mrkdwn", "text": reason[:SECTION_LIMIT]}}]
    for child in children[:MAX_LISTED_CHILDREN]:
        link = f"<{permalink(child.channel_id, child.root_ts)}|#{child.number}>" if child.root_ts else \
            f"#{child.number}"
        blocks.append({"type": "section", "text": {"type": "mrkdwn", "text":
                       f"Fork {link}{quoted_topic(child, limit=MERGE_TOPIC)} — opened by <@{child.owner_id}>"}})
        blocks.append({"type": "actions", "block_id": f"child_{child.id}", "elements": [
            button(f"Merge #{child.number}", MERGE_ACTION, child.id, "primary"),
            button(f"Abandon #{child.number}", ABANDON_ACTION, child.id, "danger")]})
    if len(children) > MAX_LISTED_CHILDREN:
        blocks.append({"type": "context", "elements": [{"type": "mrkdwn", "text":
                       f"…and {len(children) - MAX_LISTED_CHILDREN} more: see `/forks`."}]})
    return reason, blocks


def humanize(seconds: float) -> str:
    for unit, size in (("day", 86400), ("hour", 3600), ("minute", 60)):
        if seconds >= size and seconds % size == 0 or seconds >= 2 * size:
            count = round(seconds / size)
            return f"{count} {unit}{'s' if count != 1 else ''}"
    count = round(seconds)
    return f"{count} second{'s' if count != 1 else ''}"


def reminder(fork: Fork, expiry_policy: str, expiry_seconds: float) -> tuple[str, list[dict]]:
    fate = {"merge": "merged automatically", "draft": "given a draft summary to review (nothing merges until "
                                                      "someone approves it)"}.get(expiry_policy, "closed without merging")
    text = (f"⏰ Fork {fork.label} has been quiet for a while. Merge it, abandon it, or keep talking — after "
            f"{humanize(expiry_seconds)} without activity it will be {fate}.")
    return text, [{"type": "section", "text": {"type": "mrkdwn", "text": text}},
                  {"type": "actions", "elements": [button("Merge", MERGE_ACTION, fork.id, "primary"),
                                                   button("Abandon", ABANDON_ACTION, fork.id, "danger")]}]


def budget_notice(fork: Fork, burned: int, limit: int) -> tuple[str, list[dict]]:
    text = (f"🪙 Fork {fork.label} has burned {burned:,} tokens, past its budget of {limit:,}. "
            "Merge it, abandon it, or continue with a raised budget.")
    return text, [{"type": "section", "text": {"type": "mrkdwn", "text": text}},
                  {"type": "actions", "elements": [button("Merge", MERGE_ACTION, fork.id, "primary"),
                                                   button("Abandon", ABANDON_ACTION, fork.id, "danger"),
                                                   button("Continue", CONTINUE_ACTION, fork.id, None)]}]


def _closed_line(fork: Fork) -> str:
    if fork.status is ForkStatus.MERGED:
        link = f" — <{permalink(fork.channel_id, fork.summary_ts)}|summary>" if fork.summary_ts else ""
        who = "automatically after sitting idle" if fork.merged_by == EXPIRY_ACTOR else f"by <@{fork.merged_by}>"
        return f"✅ *Merged* {who}{link}"
    if fork.merge_waiting:
        who = "after sitting idle" if fork.merged_by == EXPIRY_ACTOR else f"by <@{fork.merged_by}>"
        return f"⏳ *Merging* ({who}) — waiting for Claude to finish its answer here; the summary follows."
    if fork.status is ForkStatus.MERGING:
        return "⏳ *Merging…* Claude is writing the summary."
    return "❌ *Abandoned* — nothing was added to the channel's conversation."


def button(label: str, action_id: str, value: str | int, style: str | None = None) -> dict:
    """A button whose value (a fork id, a fork and draft number…) names what it acts on."""
    made = {"type": "button", "text": plain(label), "action_id": action_id, "value": str(value)}
    return {**made, "style": style} if style else made


def section(text: str) -> dict:
    return {"type": "section", "text": {"type": "mrkdwn", "text": text}}


def plain(text: str) -> dict:
    return {"type": "plain_text", "text": text}


def quoted_topic(fork: Fork, missing: str = "", limit: int | None = None) -> str:
    """ “the topic” after a fork's number (at most `limit` characters), or `missing` when it has none."""
    return f" “{safe.topic(fork.topic, limit)}”" if fork.topic else missing
