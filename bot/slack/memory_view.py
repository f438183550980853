"""Pure rendering of memory in Slack: the "remembered" note with its Undo (or Keep / Undo) buttons, and
`/threadfork memory`'s modal — each entry with who saved it, when, from which fork (a link), and its Edit and
Delete buttons — and the modal that edits one entry."""
from __future__ import annotations

import json

from ..domain.memory import TEXT_LIMIT, MemoryEntry, size
from ..domain.model import Channel
from ..domain.text import inert
from .render import permalink, plain, section

MEMORY_VIEW = "threadfork_memory"  # the list's callback_id
MEMORY_EDIT_VIEW = "threadfork_memory_edit"
UNDO_ACTION = "threadfork_memory_undo"
KEEP_ACTION = "threadfork_memory_keep"
EDIT_ACTION = "threadfork_memory_edit"
DELETE_ACTION = "threadfork_memory_delete"
SHOWN = 40  # entries the modal lists (two blocks each; Slack allows 100 blocks in a view)


def note_blocks(text: str, entry_id: int, ask: bool) -> list[dict]:
    buttons = [{"type": "button", "text": plain("Undo"), "action_id": UNDO_ACTION, "value": str(entry_id)}]
    if ask:
        buttons.insert(0, {"type": "button", "text": plain("Keep"), "action_id": KEEP_ACTION,
                           "value": str(entry_id), "style": "primary"})
    return [section(text[:2_900]), {"type": "actions", "block_id": "memory_note", "elements": buttons}]


def memory_view(channel: Channel, entries: list[MemoryEntry], budget: int) -> dict:
    shared = [e for e in entries if e.owner_id is None and not e.workspace]
    used = f"{size(shared):,} of {budget:,} tokens" if budget else f"{size(shared):,} tokens (no budget)"
    blocks = [section(f"🧠 What every session of <#{channel.id}> remembers — {used}. Each request here carries it; "
                      "delete what no longer holds. `@Threadfork remember <text>` adds an entry.")]
    if not entries:
        blocks.append(section("_Nothing remembered yet._"))
    for entry in entries[:SHOWN]:
        blocks += [section(_line(entry)), {"type": "actions", "block_id": f"entry_{entry.id}", "elements": [
            {"type": "button", "text": plain("Edit"), "action_id": EDIT_ACTION, "value": str(entry.id)},
            {"type": "button", "text": plain("Delete"), "action_id": DELETE_ACTION, "value": str(entry.id),
             "style": "danger"}]}]
    if len(entries) > SHOWN:
        blocks.append(section(f"_…and {len(entries) - SHOWN} more, older ones._"))
    return {"type": "modal", "callback_id": MEMORY_VIEW, "title": plain("Channel memory"), "close": plain("Done"),
            "private_metadata": json.dumps({"channel": channel.id}), "blocks": blocks}


def _line(entry: MemoryEntry) -> str:
    scope = "🏢 workspace · " if entry.workspace else "🔒 yours only · " if entry.owner_id else ""
    pending = " · _waiting for Keep_" if entry.pending else ""
    source = ""
    if entry.source_fork:
        fork = f"fork #{entry.source_fork}"
        source = f" · from <{permalink(entry.channel.id, entry.source_ts)}|{fork}>" if entry.source_ts else \
            f" · from {fork}"
    when = f"<!date^{int(entry.created_at.timestamp())}^{{date_short}}|{entry.created_at:%Y-%m-%d}>"
    return inert(f"“{entry.text}”", 2_700) + f"\n{scope}<@{entry.author_id}> · {when}{source}{pending}"


def editor_view(entry: MemoryEntry) -> dict:
    return {"type": "modal", "callback_id": MEMORY_EDIT_VIEW, "title": plain("Edit memory"), "submit": plain("Save"),
            "close": plain("Cancel"), "private_metadata": json.dumps({"entry": entry.id, "channel": entry.channel.id}),
            "blocks": [{"type": "input", "block_id": "text", "label": plain("Remembered"), "element": {
                "type": "plain_text_input", "action_id": "value", "multiline": True, "max_length": TEXT_LIMIT,
                "initial_value": entry.text}}]}


def edited_entry(view: dict) -> tuple[int | None, str]:
    """The entry id a submitted editor names, and its new text."""
    try:
        entry = int(json.loads(view.get("private_metadata") or "")["entry"])
    except (ValueError, KeyError, TypeError):
        entry = None
    value = (((view.get("state") or {}).get("values") or {}).get("text") or {}).get("value") or {}
    return entry, value.get("value") or ""
