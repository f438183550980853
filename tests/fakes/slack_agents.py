"""Slack's agent platform in the fake: agent sessions, suggested prompts, and a person pressing Stop.

Sources (read 2026-12-02): docs.slack.dev/ai/agent-sessions, /reference/methods/agents.sessions.setStatus,
/reference/methods/agents.sessions.rename, /reference/methods/assistant.threads.setSuggestedPrompts,
/reference/events/agent_session_stopped, /ai/migrating-to-agent-messaging; (read 2026-12-05)
/reference/methods/chat.stopStream.

Invariants, as the docs state them:
- A session is scoped to one thread (`channel_id` + `thread_ts`, both needed for thread-based sessions in
  channels and DMs). `agents.sessions.setStatus` creates it (with its `title`, at most 200 characters,
  and `initiator_user_id`) or changes its status; title and initiator are ignored once it exists.
  Statuses: active, processing, suspended, closed. `agents.sessions.rename` sets a title of 1–200
  characters.
- `chat.stopStream` takes an optional `session_status`, "the session status to set after stopping the
  stream" (one of the four; default `active`): a stream stopped in a thread with a session moves it.
- Declaring the app an agent gives it `assistant:write`: a workspace whose granted scopes (known to the
  fake) lack it is answered `missing_scope` (with `needed`/`provided`), as Slack answers a scope missing.
- Where the agent feature is off for the app (`feature_off`), session calls answer `feature_disabled` (the
  code /reference/methods/assistant.threads.setStatus and /assistant.threads.setTitle document, the methods
  agents.sessions.setStatus and rename succeed) and `assistant.threads.setSuggestedPrompts` answers
  `not_agent_app` (its page: the app is not an agent app).
- `assistant.threads.setSuggestedPrompts`: `assistant:write`; one to four prompts, each with a title and a
  message. For an agent app (`agent_view`) a `thread_ts` makes the call fail silently: the fake counts
  that as a bug of the caller.
- Stop (`press_stop`): Slack shows it while a session is `processing`; a press stops the app's streaming
  messages in that thread and sends `agent_session_stopped` (channel, thread_ts, user,
  streaming_message_ts). The session stays `processing` until the app moves it.

Where the docs are silent, the fake chooses what Slack most plausibly does, and says so:
- a setStatus or rename naming a thread that does not exist in the channel: `invalid_thread_ts` (the
  error assistant.threads.setTitle documents for it); a rename of a thread with no session:
  `session_not_found`;
- a stream Slack stopped on a press refuses `chat.appendStream` (`stopped_by_user`, an error its page
  documents) and takes one `chat.stopStream`, which finalises it with the app's last words (the event's
  page tells apps to move the session on "using either agents.sessions.setStatus or chat.stopStream").
"""
from __future__ import annotations

import json
import threading
from dataclasses import dataclass, field

STATUSES = {"active", "processing", "suspended", "closed"}
TITLE_LIMIT = 200
MAX_PROMPTS = 4
AGENT_SCOPE = "assistant:write"


@dataclass
class AgentSession:
    channel: str
    thread_ts: str
    title: str | None
    initiator: str | None
    statuses: list[str] = field(default_factory=list)  # every status set, in order
    titles: list[str] = field(default_factory=list)  # every title it had, in order

    @property
    def status(self) -> str:
        return self.statuses[-1]


@dataclass
class Prompts:
    team: str
    channel: str
    prompts: list[dict]
    title: str | None


class Agents:
    def __init__(self):
        self.sessions: dict[tuple[str, str, str], AgentSession] = {}  # (team, channel, thread_ts) → session
        self.prompts: list[Prompts] = []
        self.feature_off: set[str] = set()  # teams where the app is not an agent app (the feature is off)
        self._lock = threading.Lock()

    def refused(self, team: str, method: str) -> str | None:
        """Slack's refusal where the agent feature is off for the app."""
        if team not in self.feature_off:
            return None
        return "not_agent_app" if method == "assistant.threads.setSuggestedPrompts" else "feature_disabled"

    def session(self, team: str, channel: str, thread_ts: str) -> AgentSession | None:
        with self._lock:
            return self.sessions.get((team, channel, thread_ts))

    def set_status(self, team: str, args: dict, thread_exists) -> tuple[dict, str | None]:
        """(Slack's answer, a bug of the caller's if it made one)."""
        problem = self._where(args) or _title_problem(args.get("title"), required=False)
        if args["status"] not in STATUSES:
            problem = problem or f"status {args['status']!r} is not one of {sorted(STATUSES)}"
        if problem:
            return {"ok": False, "error": "invalid_arguments"}, problem
        if not thread_exists(args["channel_id"], args["thread_ts"]):
            return {"ok": False, "error": "invalid_thread_ts"}, None
        key = (team, args["channel_id"], args["thread_ts"])
        with self._lock:
            session = self.sessions.get(key)
            if session is None:
                session = self.sessions[key] = AgentSession(args["channel_id"], args["thread_ts"], args.get("title"),
                                                            args.get("initiator_user_id"))
                if session.title:
                    session.titles.append(session.title)
            session.statuses.append(args["status"])
            return {"ok": True, "status": args["status"], "title": session.title}, None

    def rename(self, team: str, args: dict) -> tuple[dict, str | None]:
        problem = self._where(args) or _title_problem(args.get("title"), required=True)
        if problem:
            return {"ok": False, "error": "invalid_arguments"}, problem
        with self._lock:
            session = self.sessions.get((team, args["channel_id"], args["thread_ts"]))
            if session is None:
                return {"ok": False, "error": "session_not_found"}, None
            session.title = args["title"]
            session.titles.append(args["title"])
            return {"ok": True, "title": session.title}, None

    def suggest(self, team: str, args: dict) -> tuple[dict, str | None]:
        prompts = args["prompts"]
        if isinstance(prompts, str):  # form-encoded: a JSON array
            try:
                prompts = json.loads(prompts)
            except ValueError:
                return {"ok": False, "error": "invalid_arguments"}, "prompts is not JSON"
        well_formed = isinstance(prompts, list) and all(
            isinstance(p, dict) and set(p) == {"title", "message"} and all(isinstance(v, str) and v.strip()
                                                                            for v in p.values()) for p in prompts)
        if not well_formed or not 1 <= len(prompts) <= MAX_PROMPTS:
            return {"ok": False, "error": "invalid_arguments"}, f"prompts must be 1–{MAX_PROMPTS} {{title, message}}"
        if args.get("thread_ts"):
            return {"ok": True}, "setSuggestedPrompts with thread_ts fails silently for an agent app"
        with self._lock:
            self.prompts.append(Prompts(team, args["channel_id"], prompts, args.get("title")))
        return {"ok": True}, None

    def stream_stopped(self, team: str, channel: str, thread_ts: str | None, status: str) -> None:
        """chat.stopStream in a thread: its session (if it has one) takes `status`."""
        with self._lock:
            session = self.sessions.get((team, channel, thread_ts or ""))
            if session is not None:
                session.statuses.append(status)

    def pressed(self, team: str, channel: str, thread_ts: str) -> AgentSession:
        """Stop can be pressed only while the session is processing."""
        with self._lock:
            session = self.sessions.get((team, channel, thread_ts))
        if session is None or session.status != "processing":
            raise AssertionError(f"no Stop button: the session of {channel}/{thread_ts} is "
                                 f"{session.status if session else 'missing'}")
        return session

    @staticmethod
    def _where(args: dict) -> str | None:
        if not args.get("channel_id") or not args.get("thread_ts"):
            return "a thread-based session needs channel_id and thread_ts"
        return None


def _title_problem(title, required: bool) -> str | None:
    if title is None:
        return "a title is required" if required else None
    if not isinstance(title, str) or not 1 <= len(title) <= TITLE_LIMIT:
        return f"a title has 1–{TITLE_LIMIT} characters, not {len(title) if isinstance(title, str) else title!r}"
    return None
