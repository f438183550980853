"""The messages that exist in Slack's channels, and `conversations.replies` over them.

Invariants (docs.slack.dev/reference/methods/conversations.replies; the answer's schema in slackapi's
OpenAPI description):
- A channel holds people's messages and other apps' (recorded as Slack received them, by `record`)
  and the bot's own (FakeSlack's messages, as they look now). Each lives in one team's channel: another
  team's token finds neither (`channel_not_found`).
- `conversations.replies(channel, ts)`: the ts of a thread's parent gives the parent, then its replies
  oldest first; the ts of a reply gives that reply alone (as Slack does, bolt-python issue 783); of a
  message without replies, that message alone; a ts naming no message of the channel is
  `thread_not_found`, a channel where no message lives `channel_not_found`.
- Shapes: type "message", ts, text, and `user` (people, and the bot with its bot_id, app_id and
  bot_profile) or `bot_id` with subtype `bot_message` (an app without a bot user); thread members carry
  thread_ts; the parent reply_count, reply_users, reply_users_count, latest_reply; a reply parent_user_id.
- Pages: `limit` messages (default and most 1,000); `oldest`, `latest` and `inclusive` narrow the
  replies, never the parent; `has_more`, and `response_metadata.next_cursor` while more remain (a
  cursor this fake did not give is `invalid_cursor`). Every later page starts with the parent again,
  so a reader must not count it twice.
"""
from __future__ import annotations

import base64
import threading
from decimal import Decimal

PAGE_LIMIT = 1_000


class History:
    def __init__(self, bot_messages):
        self._bot_messages = bot_messages  # team id -> [message dicts with "channel"], as they look now
        self.said: list[dict] = []  # messages of people and other apps, with "channel" and "team"
        self.channels: set[tuple[str, str]] = set()  # (team, channel) that exist without a message
        self._lock = threading.Lock()

    def record(self, team: str, message: dict) -> None:
        """A message Slack received from someone other than the bot (as its message event has it)."""
        keep = {k: v for k, v in message.items() if k not in ("event_ts", "channel_type")}
        with self._lock:
            self.said.append({**keep, "team": team})

    def add_channel(self, team: str, channel: str) -> None:
        with self._lock:
            self.channels.add((team, channel))

    def messages(self, team: str, channel: str) -> list[dict]:
        """Every message of the channel, oldest first."""
        with self._lock:
            found = [m for m in self.said if m["team"] == team and m.get("channel") == channel]
        found += [m for m in self._bot_messages(team) if m.get("channel") == channel]
        return sorted(found, key=lambda m: Decimal(m["ts"]))

    def writers(self, team: str, channel: str) -> list[str] | None:
        """Who wrote in the channel (people and the bot, by user id, first message first); None without any."""
        found = self.messages(team, channel)
        return list(dict.fromkeys(m["user"] for m in found if m.get("user"))) if found else None

    def find(self, team: str, channel: str, ts: str) -> dict | None:
        """The message as Slack's readers see it (no channel), or None."""
        found = next((m for m in self.messages(team, channel) if m["ts"] == ts), None)
        return _shown(found) if found else None

    def replies(self, team: str, args: dict) -> dict:
        channel, ts = args.get("channel"), args.get("ts")
        everything = self.messages(team, channel)
        if not everything and (team, channel) not in self.channels:
            return {"ok": False, "error": "channel_not_found"}
        target = next((m for m in everything if m["ts"] == ts), None)
        if target is None:
            return {"ok": False, "error": "thread_not_found"}
        if target.get("thread_ts") not in (None, target["ts"]):
            return {"ok": True, "messages": [_shown(target)], "has_more": False}
        thread = [m for m in everything if m.get("thread_ts") == ts and m["ts"] != ts]
        parent = _parent(target, thread)
        thread = [_reply(m, parent) for m in thread if _within(m["ts"], args)]
        return _page([parent, *thread], args)


def _page(thread: list[dict], args: dict) -> dict:
    limit = _int(args.get("limit"), PAGE_LIMIT)
    limit = PAGE_LIMIT if limit <= 0 else min(limit, PAGE_LIMIT)
    start = 0
    if args.get("cursor"):
        wanted = _cursor_ts(args["cursor"])
        start = next((i for i, m in enumerate(thread) if m["ts"] == wanted and i > 0), None)
        if start is None:
            return {"ok": False, "error": "invalid_cursor"}
    page = thread[start:start + limit]
    if start > 0:
        page = [thread[0], *page]
    answer = {"ok": True, "messages": page, "has_more": start + limit < len(thread)}
    if answer["has_more"]:
        answer["response_metadata"] = {"next_cursor": _cursor(thread[start + limit]["ts"])}
    return answer


def _shown(message: dict) -> dict:
    return {k: v for k, v in message.items() if k != "channel"}


def _parent(message: dict, replies: list[dict]) -> dict:
    shown = _shown(message)
    if replies:
        users = list(dict.fromkeys(m.get("user") or m.get("bot_id") for m in replies))
        shown.update(thread_ts=message["ts"], reply_count=len(replies), reply_users=users[:5],
                     reply_users_count=len(users), latest_reply=replies[-1]["ts"], is_locked=False,
                     subscribed=False)
    return shown


def _reply(message: dict, parent: dict) -> dict:
    return {**_shown(message), "parent_user_id": parent.get("user") or parent.get("bot_id")}


def _within(ts: str, args: dict) -> bool:
    inclusive = str(args.get("inclusive", "")).lower() in ("1", "true")
    value = Decimal(ts)
    if args.get("oldest") not in (None, ""):
        oldest = Decimal(str(args["oldest"]))
        if value < oldest or (value == oldest and not inclusive):
            return False
    if args.get("latest") not in (None, ""):
        latest = Decimal(str(args["latest"]))
        if value > latest or (value == latest and not inclusive):
            return False
    return True


def _cursor(ts: str) -> str:
    return base64.b64encode(f"next_ts:{ts.replace('.', '')}".encode()).decode()


def _cursor_ts(cursor: str) -> str | None:
    try:
        digits = base64.b64decode(cursor, validate=True).decode().removeprefix("next_ts:")
    except (ValueError, UnicodeDecodeError):
        return None
    return f"{digits[:-6]}.{digits[-6:]}" if digits.isdigit() and len(digits) > 6 else None


def _int(value, default: int) -> int:
    try:
        return int(value)
    except (TypeError, ValueError):
        return default
