"""Pure rendering of a summary under review: its message in the fork's thread (with Merge as is /
Edit / Redraft / Cancel), that message once the draft is settled, and the two modals (edit, redraft
guidance) with the reading of what people submitted in them.

A button's value and a modal's private_metadata name the fork and the draft number, so a press on an
older draft is recognised as such. A plain_text_input holds at most 3,000 characters, so a longer
draft is edited in several boxes, cut at line breaks (else spaces) where it can be; the whitespace
each cut took out is kept in the modal's private_metadata and put back between the boxes, so a draft
saved untouched comes back byte for byte.
"""
from __future__ import annotations

import json

from ..domain import text as safe
from ..domain.text import is_slack_id, row_id
from ..domain.merge import EXPIRY_ACTOR
from ..domain.model import Draft, Fork
from ..domain.text import NameOf
from .render import SECTION_LIMIT, button, plain, remember_blocks, section, summary_blocks

APPROVE_ACTION = "draft_merge"
EDIT_ACTION = "draft_edit"
REDRAFT_ACTION = "draft_redraft"
CANCEL_ACTION = "draft_cancel"
EDIT_VIEW = "threadfork_edit_summary"  # modal callback ids
REDRAFT_VIEW = "threadfork_redraft"
TEXT_BOX = 3_000  # Slack's cap on a plain_text_input
PART = "summary_{}"  # the edit modal's input blocks, numbered from 1
GUIDANCE = "guidance"
GUIDANCE_LIMIT = 2_000  # characters of a redraft's guidance (its box's max_length)
SEPARATOR = "\n\n"
JOIN_LIMIT = 8  # characters of whitespace kept per cut: the modal's private_metadata holds 3,000


def draft_value(fork: Fork, draft: Draft) -> str:
    return f"{fork.id}:{draft.number}"


def parse_value(value: str) -> tuple[int, int] | None:
    """A button's or modal's `fork_id:draft_number`; None when malformed."""
    fork_id, _, number = (value or "").partition(":")
    fork_id, number = row_id(fork_id), row_id(number)
    return (fork_id, number) if fork_id is not None and number is not None else None


def draft_text(fork: Fork, draft: Draft, guidance: str = "") -> str:
    asked = f" with the guidance “{safe.topic(guidance, 300)}”" if guidance else ""
    why = ("written because this fork sat idle past its expiry" if draft.requested_by == EXPIRY_ACTOR
           else f"asked for by <@{draft.requested_by}>")
    return (f"📝 *Draft {draft.number} of fork #{fork.number}'s summary*, {why}{asked}. Nothing enters "
            f"{_into(fork)} until someone approves it.")


def draft_blocks(fork: Fork, draft: Draft, guidance: str = "", name_of: NameOf | None = None) -> list[dict]:
    value = draft_value(fork, draft)
    return [section(draft_text(fork, draft, guidance)), *summary_blocks(draft.text, name_of),
            *remember_blocks(fork, draft.text), {"type": "actions", "block_id": f"draft_{value.replace(':', '_')}", "elements": [
                button("Merge as is", APPROVE_ACTION, value, "primary"), button("Edit", EDIT_ACTION, value),
                button("Redraft", REDRAFT_ACTION, value), button("Cancel", CANCEL_ACTION, value, "danger")]}]


def settled_blocks(fork: Fork, draft: Draft, outcome: str, name_of: NameOf | None = None) -> list[dict]:
    """The draft's message once it is merged, replaced or cancelled: no buttons, and what became of it."""
    header = f"📝 *Draft {draft.number} of fork #{fork.number}'s summary* — {outcome}"
    return [section(header[:SECTION_LIMIT]), *summary_blocks(draft.text, name_of)]


def editor_view(fork: Fork, draft: Draft, channel_id: str) -> dict:
    parts, joins = split(draft.text)
    blocks: list[dict] = [section(f"Edit the summary of fork #{fork.number}. What you save is what enters "
                                   f"{_into(fork)}, and the merge post says you edited it.")]
    for n, part in enumerate(parts, 1):
        label = "Summary" if len(parts) == 1 else f"Summary, part {n} of {len(parts)}"
        blocks.append({"type": "input", "block_id": PART.format(n), "label": plain(label), "element": {
            "type": "plain_text_input", "action_id": "text", "multiline": True, "max_length": TEXT_BOX,
            "initial_value": part}})
    return _modal(EDIT_VIEW, "Edit the summary", "Merge", blocks, fork, draft, channel_id, joins=joins)


def guidance_view(fork: Fork, draft: Draft, channel_id: str) -> dict:
    blocks = [section(f"Claude writes a new draft of fork #{fork.number}'s summary, replacing draft "
                       f"{draft.number}."),
              {"type": "input", "block_id": GUIDANCE, "optional": True, "label": plain("What should change?"),
               "element": {"type": "plain_text_input", "action_id": "text", "multiline": True,
                           "max_length": GUIDANCE_LIMIT,
                           "placeholder": plain("e.g. shorter, and keep the exact figures")}}]
    return _modal(REDRAFT_VIEW, "Redraft the summary", "Redraft", blocks, fork, draft, channel_id)


def submitted(view: dict) -> tuple[int, int, str] | None:
    """A submitted modal's fork id, draft number and channel id (from its private_metadata)."""
    try:
        meta = json.loads(view.get("private_metadata") or "")
        fork_id, number, channel = row_id(meta["fork"]), row_id(meta["draft"]), meta["channel"]
    except (ValueError, KeyError, TypeError):
        return None
    return (fork_id, number, channel) if fork_id and number and is_slack_id(channel) else None


def edited_text(view: dict) -> str:
    """The boxes' text joined back with what each cut took out (a box emptied joins nothing)."""
    values = (view.get("state") or {}).get("values") or {}
    try:
        joins = list(json.loads(view.get("private_metadata") or "").get("joins") or [])
    except (ValueError, AttributeError):
        joins = []
    text, n = "", 1
    while PART.format(n) in values:
        part = (values[PART.format(n)].get("text") or {}).get("value") or ""
        if n > 1 and text and part:
            text += joins[n - 2] if n - 2 < len(joins) and isinstance(joins[n - 2], str) else SEPARATOR
        text += part
        n += 1
    return text.strip()


def guidance(view: dict) -> str:
    values = (view.get("state") or {}).get("values") or {}
    return ((values.get(GUIDANCE) or {}).get("text") or {}).get("value") or ""


def split(text: str, size: int = TEXT_BOX) -> tuple[list[str], list[str]]:
    """`text` (stripped) in pieces of at most `size` characters, and the whitespace each cut took out:
    pieces[0] + joins[0] + pieces[1] + … is the text again. Cuts fall on the last line break that fits,
    else the last space, else anywhere; no piece starts or ends with the whitespace of a cut."""
    rest, parts, joins = text.strip(), [], []
    while len(rest) > size:
        at = max(rest.rfind("\n", 1, size + 1), 0) or max(rest.rfind(" ", 1, size + 1), 0)
        start = end = at or size
        if at:
            while start > 1 and rest[start - 1].isspace():
                start -= 1
            while end < len(rest) and rest[end].isspace():
                end += 1
        parts.append(rest[:start])
        joins.append(rest[start:end][:JOIN_LIMIT])
        rest = rest[end:]
    return parts + [rest], joins


def _into(fork: Fork) -> str:
    return f"fork #{fork.parent_number}'s conversation" if fork.nested else "the channel's conversation"


def _modal(callback_id: str, title: str, submit: str, blocks: list[dict], fork: Fork, draft: Draft,
           channel_id: str, **more) -> dict:
    meta = json.dumps({"fork": fork.id, "draft": draft.number, "channel": channel_id, **more})
    return {"type": "modal", "callback_id": callback_id, "title": plain(title), "submit": plain(submit),
            "close": plain("Cancel"), "private_metadata": meta, "blocks": blocks}
