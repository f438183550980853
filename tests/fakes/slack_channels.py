"""Channels the fake knows the members of, and `conversations.info` / `conversations.members` over them.

Sources: docs.slack.dev/reference/methods/conversations.info and /conversations.members (read 2026-12-02).
Invariants:
- A channel a test declares (`add`) has a name, is public or private, and has members (the bot among
  them, or not). A channel it did not declare but that holds messages (slack_history.py) is public and
  has as members the people who wrote there, and the bot if it posted there — as in Slack, where one
  posts only in a channel one is in (its name is its id, lower-cased). Any other channel does not exist
  for these methods (`channel_not_found`).
- The bot sees a public channel whether or not it is in it (`is_member` says); a private channel it is not
  in is `channel_not_found`, as for anyone outside it.
- Scopes, when the workspace's are known: `channels:read` for a public channel, `groups:read` for a
  private one, else `missing_scope` (with `needed` and `provided`).
- `conversations.members` pages: `limit` members (default 100, at most 1,000), `response_metadata.
  next_cursor` while more remain ("" on the last page); a cursor the fake did not give is `invalid_cursor`.
"""
from __future__ import annotations

import base64
import threading
from dataclasses import dataclass, field

DEFAULT_PAGE, MAX_PAGE = 100, 1_000


@dataclass
class Room:
    id: str
    name: str
    private: bool
    members: list[str] = field(default_factory=list)


class Channels:
    def __init__(self, writers=None):
        """`writers(team, channel)`: who wrote in a channel not declared (people's ids, the bot's), or None."""
        self.rooms: dict[tuple[str, str], Room] = {}  # (team, channel) → room
        self.writers = writers or (lambda team, channel: None)
        self._lock = threading.Lock()

    def add(self, team: str, channel: str, name: str, members, private: bool = False) -> Room:
        with self._lock:
            room = self.rooms[(team, channel)] = Room(channel, name, private, list(dict.fromkeys(members)))
            return room

    def join(self, team: str, channel: str, user: str) -> None:
        with self._lock:
            room = self.rooms[(team, channel)]
            if user not in room.members:
                room.members.append(user)

    def leave(self, team: str, channel: str, user: str) -> None:
        with self._lock:
            room = self.rooms[(team, channel)]
            room.members = [m for m in room.members if m != user]

    def info(self, team: str, args: dict, bot_user: str, scopes) -> dict:
        room, refused = self._visible(team, args["channel"], bot_user, scopes)
        if refused:
            return refused
        return {"ok": True, "channel": {
            "id": room.id, "name": room.name, "name_normalized": room.name, "is_channel": not room.private,
            "is_group": False, "is_im": False, "is_mpim": False, "is_private": room.private, "is_archived": False,
            "is_general": False, "is_shared": False, "is_org_shared": False, "is_ext_shared": False,
            "is_member": bot_user in room.members, "created": 1_700_000_000, "creator": room.members[0] if room.members
            else "", "context_team_id": team}}

    def members(self, team: str, args: dict, bot_user: str, scopes) -> dict:
        room, refused = self._visible(team, args["channel"], bot_user, scopes)
        if refused:
            return refused
        try:
            limit = int(args.get("limit") or DEFAULT_PAGE)
        except (TypeError, ValueError):
            limit = DEFAULT_PAGE
        limit = min(max(limit, 1), MAX_PAGE)
        start = 0
        if args.get("cursor"):
            try:
                start = int(base64.b64decode(args["cursor"]).decode().removeprefix("members:"))
            except ValueError:
                return {"ok": False, "error": "invalid_cursor"}
        with self._lock:
            page, more = room.members[start:start + limit], start + limit < len(room.members)
        cursor = base64.b64encode(f"members:{start + limit}".encode()).decode() if more else ""
        return {"ok": True, "members": page, "response_metadata": {"next_cursor": cursor}}

    def _visible(self, team: str, channel: str, bot_user: str, scopes) -> tuple[Room | None, dict | None]:
        with self._lock:
            room = self.rooms.get((team, channel))
        if room is None and (wrote := self.writers(team, channel)) is not None:
            room = Room(channel, channel.lower(), False, wrote)
        if room is None:
            return None, {"ok": False, "error": "channel_not_found"}
        needed = "groups:read" if room.private else "channels:read"
        if scopes is not None and needed not in scopes:
            return None, {"ok": False, "error": "missing_scope", "needed": needed, "provided": ",".join(scopes)}
        if room.private and bot_user not in room.members:
            return None, {"ok": False, "error": "channel_not_found"}
        return room, None
