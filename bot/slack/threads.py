"""A thread's messages as conversations.replies gives them, read for an adoption only.

Pages are followed with Slack's cursor (slack-sdk's SlackResponse iterates them) up to MAX_PAGES of
PAGE_SIZE, so a thread of any length costs a bounded number of calls. Slack may give fewer a page and fewer
pages a minute (an app outside the Marketplace: 15, once a minute); each page then waits out Retry-After
(clients.py), and a page it never gives ends the reading with what was read. Each message keeps what the
transcript needs: who wrote it, its words, and the names of its files (never their contents;
deleted files, shown as tombstones, are left out).
"""
from __future__ import annotations

import logging
from collections.abc import Iterable, Iterator

from ..domain.text import storable
from ..services.ports import ThreadMessage
from .clients import FAILURES, failure_code

log = logging.getLogger(__name__)

PAGE_SIZE = 200  # Slack suggests at most 200 per page for cursor paging
MAX_PAGES = 25  # 5,000 messages: the transcript keeps a thread's first and latest ones anyway

# message subtypes that are no one's words: joins, leaves, channel settings…
_NOT_WORDS = {"channel_join", "channel_leave", "group_join", "group_leave", "channel_topic", "channel_purpose",
              "channel_name", "tombstone", "thread_broadcast_deleted"}


def thread_messages(pages: Iterable) -> list[ThreadMessage]:
    """The messages of every page (SlackResponse objects or dicts), root first, each once."""
    seen: set[str] = set()
    found: list[ThreadMessage] = []
    for number, page in enumerate(pages, start=1):
        for raw in page.get("messages") or []:
            message = thread_message(raw)
            if message is not None and message.ts not in seen:
                seen.add(message.ts)
                found.append(message)
        if number >= MAX_PAGES:
            break
    return found


def while_given(pages: Iterable) -> Iterator:
    """The pages Slack gives, up to one it will not give (even after the retries): the thread read that far."""
    try:
        yield from pages
    except FAILURES as error:
        log.warning("conversations.replies stopped giving pages (%s); the thread is read that far", failure_code(error))


def thread_message(raw: dict) -> ThreadMessage | None:
    if not isinstance(raw, dict) or not raw.get("ts") or raw.get("subtype") in _NOT_WORDS:
        return None
    files = tuple(storable(str(f.get("name") or f.get("title") or f.get("id") or "a file"))
                  for f in raw.get("files") or [] if isinstance(f, dict) and f.get("mode") != "tombstone")
    profile = raw.get("bot_profile") if isinstance(raw.get("bot_profile"), dict) else {}
    name = raw.get("username") or profile.get("name")
    return ThreadMessage(ts=str(raw["ts"]), user_id=raw.get("user") or None, text=storable(raw.get("text") or ""),
                         name=storable(str(name)) if name else None, files=files)
