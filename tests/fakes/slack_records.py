"""What the fake Slack records: the calls it received, the bot's messages as they look now, the
refusals it answered, and the failures a test scripted.

Invariants: a Call knows the token that carried it and the team that token stands for (None when
Slack would not know it); a Message belongs to the team whose token created it, and `as_slack` is
the message as other clients (conversations.replies) see it."""
from __future__ import annotations

import time
from dataclasses import dataclass, field

from .slack_teams import APP_ID, TEAM_ID, Team


@dataclass
class Call:
    method: str
    args: dict
    at: float = field(default_factory=time.monotonic)
    token: str | None = None
    team: str | None = None  # the team the token stands for; None if Slack did not accept it

    def __getitem__(self, key):
        return self.args[key]

    def get(self, key, default=None):
        return self.args.get(key, default)


@dataclass
class Refusal:
    """An `ok: false` answer the fake's rules gave (not a scripted failure)."""
    method: str
    error: str
    team: str | None
    why: str = ""


@dataclass
class Message:
    """A message as people would see it now: created by chat.postMessage or chat.startStream,
    then changed by chat.update or appendStream/stopStream. `args` holds its current fields."""

    method: str
    args: dict
    ts: str
    streaming: bool = False
    stopped_by_user: bool = False  # a person pressed Stop: streaming no more, appends refused, one chat.stopStream
    finalised: bool = False  # that one chat.stopStream came
    expires: float | None = None  # monotonic time a stream Slack was not told to stop ends by itself
    expired: bool = False  # it did: no Stop, no stopStream — it shows what it had
    updates: list[float] = field(default_factory=list)  # monotonic times of each change
    created: float = field(default_factory=time.monotonic)
    team: str = TEAM_ID

    def __getitem__(self, key):
        return self.args[key]

    def get(self, key, default=None):
        return self.args.get(key, default)

    @property
    def shown(self) -> str:
        """The Markdown people read: `markdown_text` (streamed messages too), else the message's
        markdown blocks (an answer ending with its feedback buttons), else its plain text."""
        if self.args.get("markdown_text"):
            return self.args["markdown_text"]
        blocks = self.args.get("blocks") if isinstance(self.args.get("blocks"), list) else []
        parts = [b.get("text", "") for b in blocks if isinstance(b, dict) and b.get("type") == "markdown"]
        return "".join(parts) if parts else self.args.get("text") or ""

    def as_slack(self, team: Team) -> dict:
        """The message as Slack hands it to readers, with its channel (for the fake's own filing)."""
        message = {"type": "message", "user": team.bot_user_id, "bot_id": team.bot_id, "app_id": APP_ID,
                   "text": self.args.get("text") or self.shown, "ts": self.ts, "team": team.id, "channel": self.args.get("channel"),
                   "bot_profile": {"id": team.bot_id, "app_id": APP_ID, "name": "threadfork", "deleted": False,
                                   "team_id": team.id}}
        if isinstance(self.args.get("blocks"), list):
            message["blocks"] = self.args["blocks"]
        if self.args.get("thread_ts"):
            message["thread_ts"] = self.args["thread_ts"]
        return message


def chunk_text(args: dict) -> str:
    text = args.get("markdown_text") or ""
    for chunk in args.get("chunks") or []:
        if chunk.get("type") == "markdown_text":
            text += chunk.get("text", "")
    return text


@dataclass
class Failure:
    error: str
    times: int
    status: int = 200
    retry_after: int | None = None
    applied: bool = False
    drop: bool = False
