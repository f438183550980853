"""Messages shared or forwarded into a message, as Slack delivers them: each is one of the message's
`attachments` marked `is_share` (a share or forward) or `is_msg_unfurl` (a pasted message link),
carrying the shared message's `text` (or only its `message_blocks`), `author_id` / `author_name` /
`author_subname`, and its own `files` (docs.slack.dev/messaging/formatting-message-text#attachments
for the attachment fields, docs.slack.dev/tools/node-slack-sdk/reference/web-api/interfaces/
MessageAttachment for `author_subname`; the share markers as real payloads carry them).

The sharer's own words stay in the message's `text`: whether the bot was mentioned is read there
only, so sharing a message that mentions the bot is no mention, and a channel share without a
mention stays chatter.
"""
from __future__ import annotations

from ..domain.shared import SharedMessage
from ..domain.text import storable


def shares(event: dict) -> list[dict]:
    """The event's attachments that are shared messages, in order."""
    return [a for a in event.get("attachments") or []
            if isinstance(a, dict) and (a.get("is_share") or a.get("is_msg_unfurl"))]


def shared_messages(event: dict) -> tuple[SharedMessage, ...]:
    return tuple(
        SharedMessage(text=storable(share.get("text") or _block_words(share.get("message_blocks"))),
                      author_id=share.get("author_id") or None,
                      author_name=storable(share.get("author_name") or share.get("author_subname") or "") or None,
                      files=tuple(storable(_file_name(f)) for f in _files(share)))
        for share in shares(event))


def shared_files(event: dict) -> list[dict]:
    """The shared messages' own files (file objects, possibly Slack Connect stubs)."""
    return [file for share in shares(event) for file in _files(share)]


def _files(share: dict) -> list[dict]:
    return [f for f in share.get("files") or [] if isinstance(f, dict) and f.get("id")]


def _file_name(file: dict) -> str:
    return file.get("name") or file.get("title") or file["id"]


def _block_words(message_blocks) -> str:
    """The words of a shared message that came only as blocks (rich_text's text and link elements)."""
    lines = []
    for entry in message_blocks or []:
        for block in ((entry or {}).get("message") or {}).get("blocks") or []:
            words = "".join(_element_words(block)).rstrip("\n")
            if words:
                lines.append(words)
    return "\n".join(lines)


def _element_words(element) -> list[str]:
    if not isinstance(element, dict):
        return []
    kind = element.get("type")
    if kind == "text":
        return [element.get("text") or ""]
    if kind == "link":
        return [element.get("text") or element.get("url") or ""]
    if kind == "user" and element.get("user_id"):
        return [f"<@{element['user_id']}>"]
    words = [piece for child in element.get("elements") or [] for piece in _element_words(child)]
    if kind in ("rich_text_section", "rich_text_preformatted", "rich_text_quote") and words:
        words.append("\n")
    return words
