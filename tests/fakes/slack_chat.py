"""The bot's messages: chat.postMessage and chat.startStream create one, chat.update and
appendStream/stopStream change it, and each belongs to the team whose token created it.

Invariants: every ts comes from one counter (`next_ts`), which people's messages share, so ts order is
the order things happened; a message is changed only with a token of its own team, in its own channel
(else `message_not_found`); chat.update refuses more than UPDATE_LIMIT bytes of text (`msg_too_long`),
and only a streaming message takes appendStream/stopStream (`message_not_in_streaming_state`) — but for
a stream a person stopped (`stopped_by_person`: slack_agents.py), which takes one stopStream."""
from __future__ import annotations

import itertools
import threading
import time

from .slack_records import Message, chunk_text
from .slack_teams import Team

UPDATE_LIMIT = 4_000  # bytes of text chat.update accepts (see bot/slack/posted.py)


class Chat:
    def __init__(self):
        self.messages: dict[str, Message] = {}
        self._ts = itertools.count(1)
        self._later = 0  # seconds the test let pass (pass_time): ts stay in order, they only jump ahead
        self._lock = threading.Lock()

    def next_ts(self) -> str:
        n = next(self._ts)
        return f"{1_800_000_000 + self._later + n}.{n:06d}"

    def pass_time(self, seconds: float) -> None:
        """Later messages are written `seconds` later (a test plays minutes and hours without waiting)."""
        self._later += int(seconds)

    def post(self, method: str, args: dict, team: Team) -> dict:
        ts = self.next_ts()
        streaming = method == "chat.startStream"
        fields = dict(args)
        if streaming:
            fields["markdown_text"] = chunk_text(args)
            fields.pop("chunks", None)
        with self._lock:
            self.messages[ts] = Message(method, fields, ts, streaming=streaming, team=team.id)
        message = {"type": "message", "user": team.bot_user_id, "bot_id": team.bot_id, "ts": ts,
                   "text": args.get("text") or args.get("markdown_text") or ""}
        if args.get("thread_ts"):
            message["thread_ts"] = args["thread_ts"]
        return {"ok": True, "channel": args.get("channel"), "ts": ts, "message": message}

    def change(self, method: str, args: dict, team: Team) -> dict:
        channel = args.get("channel")
        with self._lock:
            target = self.messages.get(args.get("ts"))
            if target is None or target.get("channel") != channel or target.team != team.id:
                return {"ok": False, "error": "message_not_found"}
            if method == "chat.update":
                if any(len(str(args.get(k) or "").encode()) > UPDATE_LIMIT for k in ("text", "markdown_text")):
                    return {"ok": False, "error": "msg_too_long"}
                for key in ("text", "markdown_text", "blocks"):  # the new content replaces the old
                    if key in args:
                        target.args[key] = args[key]
                    else:
                        target.args.pop(key, None)
            elif method == "chat.stopStream" and target.stopped_by_user:
                target.args["markdown_text"] += chunk_text(args)
                target.stopped_by_user = False
            else:
                if not target.streaming:
                    return {"ok": False, "error": "message_not_in_streaming_state"}
                target.args["markdown_text"] += chunk_text(args)
                target.streaming = method == "chat.appendStream"
            target.updates.append(time.monotonic())
        return {"ok": True, "channel": channel, "ts": args.get("ts"), "text": args.get("text", "")}

    def stopped_by_person(self, team: str, channel: str, thread_ts: str) -> list[str]:
        """A person pressed Stop in the thread: its streaming messages stop; their ts."""
        with self._lock:
            found = [m for m in self.messages.values() if m.team == team and m.streaming
                     and m.get("channel") == channel and m.get("thread_ts") == thread_ts]
            for message in found:
                message.streaming, message.stopped_by_user = False, True
                message.updates.append(time.monotonic())
            return [m.ts for m in found]

    def all(self) -> list[Message]:
        with self._lock:
            return list(self.messages.values())

    def of_team(self, team: Team) -> list[dict]:
        """The team's bot messages as Slack's readers see them (with their channel)."""
        with self._lock:
            mine = [m for m in self.messages.values() if m.team == team.id]
        return [m.as_slack(team) for m in mine]

    def clear(self) -> None:
        with self._lock:
            self.messages.clear()
