"""The bot's messages: chat.postMessage and chat.startStream create one, chat.update and
appendStream/stopStream change it, and each belongs to the team whose token created it.

Invariants: every ts comes from one counter (`next_ts`), which people's messages share, so ts order is
the order things happened; a message is changed only with a token of its own team, in its own channel
(else `message_not_found`); chat.update refuses more than UPDATE_LIMIT bytes of text (`msg_too_long`),
and a message still streaming (`streaming_state_conflict`); only a streaming message takes
appendStream/stopStream (`message_not_in_streaming_state`) — but for a stream a person stopped
(`stopped_by_person`: slack_agents.py), which answers appends `stopped_by_user` and takes one stopStream.
A stopStream's `blocks` stay under the finalized message. A stream Slack has not been told to stop expires `stream_ttl` seconds after chat.startStream (Slack ends
streams after about five minutes: slackapi/python-slack-sdk#1859, slackapi/node-slack-sdk#2702): it keeps
what it shows, answers appendStream/stopStream `message_not_in_streaming_state`, and takes chat.update."""
from __future__ import annotations

import itertools
import threading
import time

from slack_sdk.models.messages.chunk import Chunk

from .slack_records import Message, chunk_text
from .slack_teams import Team

UPDATE_LIMIT = 4_000  # bytes of text chat.update accepts (see bot/slack/paging.py)
STREAM_TTL = 300.0  # seconds a stream lives after chat.startStream unless stopped
CHUNK_TEXT_LIMIT = 12_000  # characters of a markdown_text chunk, as of the markdown_text argument
STREAM_METHODS = ("chat.startStream", "chat.appendStream", "chat.stopStream")
TASK_STATUSES = {"pending", "in_progress", "complete", "error"}


class Chat:
    def __init__(self):
        self.messages: dict[str, Message] = {}
        self._ts = itertools.count(1)
        self._later = 0  # seconds the test let pass (pass_time): ts stay in order, they only jump ahead
        self._lock = threading.Lock()
        self.stream_ttl = STREAM_TTL  # a test may shorten it

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
            self.messages[ts] = Message(method, fields, ts, streaming=streaming, team=team.id,
                                        expires=time.monotonic() + self.stream_ttl if streaming else None)
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
            _expire(target)
            if method == "chat.update":
                if target.streaming:
                    return {"ok": False, "error": "streaming_state_conflict"}
                if any(len(str(args.get(k) or "").encode()) > UPDATE_LIMIT for k in ("text", "markdown_text")):
                    return {"ok": False, "error": "msg_too_long"}
                for key in ("text", "markdown_text", "blocks"):  # the new content replaces the old
                    if key in args:
                        target.args[key] = args[key]
                    else:
                        target.args.pop(key, None)
            elif method == "chat.appendStream" and target.stopped_by_user:
                return {"ok": False, "error": "stopped_by_user"}
            elif method == "chat.stopStream" and target.stopped_by_user and not target.finalised:
                _stream_into(target, args)
                target.finalised = True
            else:
                if not target.streaming:
                    return {"ok": False, "error": "message_not_in_streaming_state"}
                _stream_into(target, args)
                target.streaming = method == "chat.appendStream"
            target.updates.append(time.monotonic())
        return {"ok": True, "channel": channel, "ts": args.get("ts"), "text": args.get("text", "")}

    def stopped_by_person(self, team: str, channel: str, thread_ts: str) -> list[str]:
        """A person pressed Stop in the thread: its streaming messages stop; their ts."""
        with self._lock:
            for message in self.messages.values():
                _expire(message)
            found = [m for m in self.messages.values() if m.team == team and m.streaming
                     and m.get("channel") == channel and m.get("thread_ts") == thread_ts]
            for message in found:
                message.streaming, message.stopped_by_user = False, True
                message.updates.append(time.monotonic())
            return [m.ts for m in found]

    def expire_all(self) -> None:
        """Slack ends every stream now, as it does some minutes after each began."""
        with self._lock:
            for message in self.messages.values():
                if message.streaming:
                    message.expires = time.monotonic()

    def all(self) -> list[Message]:
        with self._lock:
            for message in self.messages.values():
                _expire(message)
            return list(self.messages.values())

    def of_team(self, team: Team) -> list[dict]:
        """The team's bot messages as Slack's readers see them (with their channel)."""
        with self._lock:
            mine = [m for m in self.messages.values() if m.team == team.id]
        return [m.as_slack(team) for m in mine]

    def clear(self) -> None:
        with self._lock:
            self.messages.clear()


def _stream_into(message: Message, args: dict) -> None:
    """An append's or a stop's words go after the message's; a stop's `blocks` are rendered at the bottom of the
    finalized message (chat.stopStream's page)."""
    message.args["markdown_text"] += chunk_text(args)
    if args.get("blocks"):
        message.args["blocks"] = args["blocks"]


def _expire(message: Message) -> bool:
    """A stream past its time ends as it is (no Stop: Slack ended it); True if it just did."""
    if message.streaming and message.expires is not None and time.monotonic() >= message.expires:
        message.streaming, message.expired = False, True
        return True
    return False


def stream_arguments_refused(method: str, args: dict) -> tuple[str, str] | None:
    """(Slack's error, why) for the content arguments of chat.startStream/appendStream/stopStream it refuses:
    markdown_text beside chunks, an append with neither, chunks that are not chunks (slack-sdk's Chunk types:
    markdown_text, task_update, plan_update, blocks) or a markdown_text chunk over 12,000 characters."""
    if method not in STREAM_METHODS:
        return None
    text, chunks = args.get("markdown_text"), args.get("chunks")
    if text not in (None, "") and chunks is not None:
        return "cannot_provide_both_markdown_text_and_chunks", "markdown_text and chunks together"
    if method == "chat.appendStream" and text in (None, "") and not chunks:
        return "markdown_text_or_chunks_required", "an append with neither markdown_text nor chunks"
    if chunks is None:
        return None
    problem = "chunks is not an array" if not isinstance(chunks, list) else next(
        (p for p in map(_chunk_problem, chunks) if p), None)
    return ("invalid_chunks", problem) if problem else None


def _chunk_problem(chunk) -> str | None:
    if not isinstance(chunk, dict):
        return f"a chunk is not an object: {chunk!r:.40}"
    try:
        parsed = Chunk.parse(dict(chunk))
    except TypeError as error:  # a field its type requires is missing
        return f"{chunk.get('type')} chunk: {error}"
    if parsed is None:
        return f"unknown chunk type {chunk.get('type')!r}"
    if parsed.type == "markdown_text" and (not isinstance(chunk["text"], str) or len(chunk["text"]) > CHUNK_TEXT_LIMIT):
        return f"a markdown_text chunk's text is not a string of at most {CHUNK_TEXT_LIMIT:,} characters"
    if parsed.type == "task_update" and chunk["status"] not in TASK_STATUSES:
        return f"task_update status {chunk['status']!r} is not one of {sorted(TASK_STATUSES)}"
    return None
