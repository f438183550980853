"""A fake Slack Web API: serves any number of workspaces, records every call, answers with realistic
payloads, knows exactly the methods Slack has and the arguments each requires
(slack_spec/web_api_methods.json), and can be told to fail.

Calls to a method Slack does not have, lacking a required argument or a token, with a token Slack
never issued (`invalid_auth`), or with a payload Slack would refuse (block_kit.py: `blocks` and `view`
checked with slack-sdk's Block Kit models and Slack's documented limits, texts against their length
limits, in Web API calls and in bodies posted to a `response_url` alike) are answered `{"ok": false,
...}` as Slack would, and recorded in `violations`, which the test fixtures assert to be empty. Every
`ok: false` the fake's rules give (a revoked token, a used trigger, an unknown thread…) is recorded in
`refusals`. A scripted failure may first do what was asked (`applied`: Slack did it, then failed or lost
the connection) and may answer with no HTTP response at all (`drop`: the connection is reset).
A held method (`hold`) does what is asked at once, so people see its message, but answers only once
released: as on Slack, where a message reaches people's screens before the bot has its answer.

Its parts: teams, tokens and people (slack_teams.py), the bot's messages (slack_chat.py), agent sessions,
suggested prompts and Stop (slack_agents.py), channels and their members (slack_channels.py), OAuth
installs (slack_oauth.py), modals (slack_views.py), the messages channels hold and
conversations.replies (slack_history.py), files (slack_files.py), the HTTP wire (slack_http.py) and,
when `socket_mode` is set, the Socket Mode server whose URL apps.connections.open hands out (socket_mode.py). Made without a bot token the fake is in "any token" mode (slack_teams.py).
"""
from __future__ import annotations

import json
import threading
import time
from pathlib import Path

from .block_kit import blocks_problems, text_problems, view_problems
from .http import BackgroundServer
from .slack_agents import AGENT_SCOPE, STATUSES, Agents
from .slack_channels import Channels
from .slack_chat import UPDATE_LIMIT, Chat, stream_arguments_refused
from .slack_history import History
from .slack_http import DROP, SlackHandler
from .slack_oauth import CLIENT_ID, CLIENT_SECRET, OAuth
from .slack_rates import RATELIMITED, RateLimits
from .slack_records import Call, Failure, Message, Refusal
from .slack_teams import APP_ID, APP_TOKEN, BOT_ID, BOT_TOKEN, BOT_USER_ID, TEAM_ID, Team, Teams
from .slack_views import Views
from .slack_world import SlackWorld

__all__ = ["APP_ID", "APP_TOKEN", "BOT_ID", "BOT_TOKEN", "BOT_USER_ID", "CLIENT_ID", "CLIENT_SECRET", "DROP",
           "TEAM_ID", "UPDATE_LIMIT", "Call", "FakeSlack", "Message", "Team"]

METHODS = Path(__file__).resolve().parent / "slack_spec" / "web_api_methods.json"

NO_TOKEN_METHODS = {"oauth.v2.access"}
AGENT_METHODS = {"agents.sessions.setStatus", "agents.sessions.rename", "assistant.threads.setSuggestedPrompts"}  # the app's client credentials stand in for a token
VIEW_KINDS = {"views.open": "modal", "views.push": "modal", "views.publish": "home"}
BUGS = {"unknown_method", "not_authed", "invalid_auth", "not_allowed_token_type", "invalid_arguments",
        "invalid_blocks", "invalid_blocks_format", "msg_too_long", "no_text", "invalid_chunks",
        "cannot_provide_both_markdown_text_and_chunks", "markdown_text_or_chunks_required"}  # refusals that are violations


def _required_arguments() -> dict[str, set[str]]:
    known = json.loads(METHODS.read_text())
    required = {method: set(args) for section in ("methods", "newer_methods")
                for method, args in known[section].items()}
    for method, args in known["documented_required"].items():
        required[method] |= set(args)
    return required


REQUIRED = _required_arguments()


class FakeSlack(SlackWorld):
    def __init__(self, bot_token: str | None = None, tls: bool = False):
        """`bot_token`: the default team's token, and the fake knows exactly its teams' tokens; None:
        "any token" mode, where a token the fake does not know stands for the default team. `tls`: serve
        HTTPS (Web API, response_urls, files) with the tests' certificate authority (tls.py)."""
        self.names: dict[str, str] = {}
        self.teams = Teams(bot_token or BOT_TOKEN, any_token=bot_token is None, names=self.names)
        self.bot_token = bot_token
        self.oauth = OAuth(self.teams)
        self.views = Views(self.teams)
        self.history = History(self._bot_messages)
        self.calls: list[Call] = []
        self.responses: list[dict] = []  # bodies posted to response_url
        self.violations: list[str] = []
        self.refusals: list[Refusal] = []
        self.chat = Chat()
        self.agents = Agents()
        self.channels = Channels(lambda team, channel: self.history.writers(team, channel))
        self.messages: dict[str, Message] = self.chat.messages
        self.counts: dict[str, int] = {}  # calls per method, cheap to poll
        self.tokens: list[str | None] = []  # the token each call carried, in order
        self._failures: dict[str, list[Failure]] = {}
        self._holds: dict[str, threading.Event] = {}
        self._held_every: set[str] = set()
        self._lock = threading.Lock()
        self.server = BackgroundServer(SlackHandler, tls=tls)
        self.server.httpd.fake = self
        self.files = self._new_files()
        self.socket_mode = None  # a FakeSocketMode (socket_mode.py) whose tickets apps.connections.open issues
        self.rates = RateLimits()  # each method's tier per workspace, on by default (slack_rates.py)

    # control ----------------------------------------------------------------------------

    @property
    def stream_ttl(self) -> float:
        """Seconds a stream lives after chat.startStream unless stopped (Slack: about five minutes)."""
        return self.chat.stream_ttl

    @stream_ttl.setter
    def stream_ttl(self, seconds: float) -> None:
        self.chat.stream_ttl = seconds

    def expire_streams(self) -> None:
        """Slack ends every open stream now (without a Stop), as `stream_ttl` would."""
        self.chat.expire_all()

    @property
    def api_url(self) -> str:
        return self.server.url + "/api/"

    def response_url(self, name: str = "r") -> str:
        return f"{self.server.url}/response/{name}"

    def fail(self, method: str, error: str = "internal_error", *, times: int = 1, status: int = 200,
             retry_after: int | None = None, applied: bool = False, drop: bool = False) -> None:
        with self._lock:
            self._failures.setdefault(method, []).append(
                Failure(error, times, status, retry_after, applied, drop))

    def reset(self) -> None:
        """Forget every call, message, response and scripted failure, as a fresh fake would."""
        with self._lock:
            for record in (self.calls, self.responses, self.tokens, self.refusals):
                record.clear()
            for record in (self.counts, self._failures, self._holds, self._held_every):
                record.clear()
        self.chat.clear()
        self.agents = Agents()
        self.history = History(self._bot_messages)
        self.files = self._new_files()
        self.rates = RateLimits()

    def hold(self, method: str, *, every: bool = False) -> threading.Event:
        """The next call of `method` (with `every`, each call until the event is set) is done at once and
        answered once the returned event is set (10 s at most)."""
        released = threading.Event()
        with self._lock:
            self._holds[method] = released
            if every:
                self._held_every.add(method)
        return released

    def clear_failures(self) -> None:
        with self._lock:
            self._failures.clear()

    def calls_to(self, method: str, team: str | Team | None = None) -> list[Call]:
        """The calls of a method, in order; with `team`, only those made with that team's token."""
        team_id = team.id if isinstance(team, Team) else team
        with self._lock:
            return [c for c in self.calls if c.method == method and (team_id is None or c.team == team_id)]

    def posts(self, channel: str | None = None, *, top_level: bool | None = None,
              team: str | Team | None = None) -> list[Message]:
        """Messages the bot created (posted or streamed), in order, as they look now."""
        team_id = team.id if isinstance(team, Team) else team
        found = self.chat.all()
        if channel:
            found = [c for c in found if c.get("channel") == channel]
        if team_id:
            found = [c for c in found if c.team == team_id]
        if top_level is True:
            found = [c for c in found if not c.get("thread_ts")]
        if top_level is False:
            found = [c for c in found if c.get("thread_ts")]
        return found

    def next_ts(self) -> str:
        """A new message ts, later than every one before (people's messages and the bot's share it)."""
        return self.chat.next_ts()

    def pass_time(self, seconds: float = 0.0, minutes: float = 0.0) -> None:
        """Messages from now on are written that much later, as their ts say."""
        self.chat.pass_time(seconds + 60 * minutes)

    # serving ----------------------------------------------------------------------------

    def handle(self, method: str, args: dict, token: str | None, arrived: float | None = None,
               basic: tuple[str, str] | None = None) -> tuple[int, dict, dict]:
        team, auth_error = self.teams.resolve(token, method)
        with self._lock:
            self.calls.append(Call(method, args, at=arrived or time.monotonic(), token=token,
                                   team=team.id if team else None))
            self.counts[method] = self.counts.get(method, 0) + 1
            failure = self._take_failure(method)
        if method not in REQUIRED:
            return self._refuse(method, "unknown_method", None, "no such method")
        if auth_error and method not in NO_TOKEN_METHODS:
            return self._refuse(method, auth_error, None, "no token" if auth_error == "not_authed" else
                                f"{auth_error} for a token of kind {(token or '')[:5]!r}")
        missing = sorted(REQUIRED[method] - {k for k, v in args.items() if v not in (None, "")})
        if missing:
            return self._refuse(method, "invalid_arguments", team, f"missing {missing}")
        if method == "views.update" and not (args.get("view_id") or args.get("external_id")):
            return self._refuse(method, "invalid_arguments", team, "neither view_id nor external_id")
        if method == "chat.postMessage" and not any(args.get(k) for k in ("text", "blocks", "markdown_text", "attachments")):
            return self._refuse(method, "no_text", team, "no text, blocks or markdown_text")
        if method == "chat.stopStream" and args.get("session_status") not in (None, "", *STATUSES):
            return self._refuse(method, "invalid_arguments", team, f"session_status is not one of {sorted(STATUSES)}")
        if refused := stream_arguments_refused(method, args):
            return self._refuse(method, refused[0], team, refused[1])
        refused = self._payload_refusal(method, args, team)
        if refused:
            return refused
        headers = {"x-oauth-scopes": ",".join(team.scopes)} if team and team.scopes is not None else {}
        if failure:
            if failure.applied:
                self._answer(method, args, team, basic)
            if failure.drop:
                return DROP, {}, {}
            if failure.retry_after is not None:
                headers["Retry-After"] = str(failure.retry_after)
            return failure.status, {"ok": False, "error": failure.error}, headers
        wait = self.rates.retry_after(method, team.id if team else None, args)
        if wait is not None:
            with self._lock:
                self.refusals.append(Refusal(method, "ratelimited", team.id, f"Retry-After {wait}"))
            return 429, RATELIMITED, {**headers, "Retry-After": str(wait)}
        answer = self._answer(method, self.rates.page_args(method, args), team, basic)
        with self._lock:
            held = self._holds.get(method) if method in self._held_every else self._holds.pop(method, None)
        if held:
            held.wait(10)
        if not answer.get("ok"):  # Slack's answer to a well-formed call: the caller's to handle, no bug
            with self._lock:
                self.refusals.append(Refusal(method, answer.get("error", "?"), team.id if team else None))
        return 200, answer, headers

    def _payload_refusal(self, method: str, args: dict, team: Team | None):
        """Slack's answer to blocks, a view or a text it would refuse (the error names Slack uses)."""
        kind = VIEW_KINDS.get(method)
        if kind and isinstance(args.get("view"), dict) and args["view"].get("type") != kind:
            return self._refuse(method, "invalid_arguments", team, f"{method} takes a {kind} view")
        for error, problems in (("invalid_blocks", blocks_problems(args["blocks"]) if "blocks" in args else []),
                                ("invalid_arguments", view_problems(args["view"]) if "view" in args else []),
                                ("msg_too_long", text_problems(args))):
            if problems:
                if error == "invalid_blocks" and not isinstance(args["blocks"], list):
                    error = "invalid_blocks_format"
                return self._refuse(method, error, team, "; ".join(problems))
        return None

    def _take_failure(self, method: str) -> Failure | None:
        queue = self._failures.get(method)
        if not queue:
            return None
        failure = queue[0]
        failure.times -= 1
        if failure.times <= 0:
            queue.pop(0)
        return failure

    def _refuse(self, method: str, error: str, team: Team | None, why: str = ""):
        """Record an `ok: false` of the fake's rules (a violation when it reveals a bug in the caller)."""
        with self._lock:
            self.refusals.append(Refusal(method, error, team.id if team else None, why))
            if error in BUGS:
                self.violations.append(f"{method}: {why or error}")
        return 200, {"ok": False, "error": error}, {}

    def _answer(self, method: str, args: dict, team: Team | None, basic=None) -> dict:
        channel = args.get("channel") or args.get("channel_id")
        if method == "oauth.v2.access":
            return self.oauth.access(args, basic)
        if method == "auth.test":
            return self.teams.auth_test(team)
        if method in ("chat.postMessage", "chat.startStream"):
            return self.chat.post(method, args, team)
        if method == "chat.stopStream":
            return self._stop_stream(args, team)
        if method in ("chat.update", "chat.appendStream"):
            return self.chat.change(method, args, team)
        if method == "chat.postEphemeral":
            return {"ok": True, "message_ts": self.next_ts()}
        if method == "users.info":
            return self.teams.user_info(team, args["user"])
        if method in AGENT_METHODS:
            return self._agent(method, args, team)
        if method in ("conversations.info", "conversations.members"):
            return getattr(self.channels, method.removeprefix("conversations."))(team.id, args, team.bot_user_id,
                                                                                team.scopes)
        if method == "conversations.replies":
            return self.history.replies(team.id, args)
        if method in ("views.open", "views.push", "views.update", "views.publish"):
            return getattr(self.views, method.removeprefix("views."))(team, args)
        if method == "apps.connections.open":  # a ticket for the Socket Mode server, when one runs
            url = self.socket_mode.ticket_url() if self.socket_mode else "ws://127.0.0.1:9/socket-mode-not-served"
            return {"ok": True, "url": url}
        if method == "files.info":
            return self.files.info(args.get("file"), team.id)
        if method == "chat.getPermalink":
            return {"ok": True, "channel": channel,
                    "permalink": f"https://fake.slack.test/archives/{channel}/p{args['message_ts'].replace('.', '')}"}
        return {"ok": True}

    def _stop_stream(self, args: dict, team: Team) -> dict:
        """The stream ends; the session of its thread, if any, takes `session_status` (Slack's default: active)."""
        answer = self.chat.change("chat.stopStream", args, team)
        if answer["ok"]:
            self.agents.stream_stopped(team.id, args["channel"], self.chat.messages[args["ts"]].get("thread_ts"),
                                       args.get("session_status") or "active")
        return answer

    def _agent(self, method: str, args: dict, team: Team) -> dict:
        if team.scopes is not None and AGENT_SCOPE not in team.scopes:
            return {"ok": False, "error": "missing_scope", "needed": AGENT_SCOPE, "provided": ",".join(team.scopes)}
        if refused := self.agents.refused(team.id, method):
            return {"ok": False, "error": refused}
        if method == "agents.sessions.setStatus":
            answer, bug = self.agents.set_status(team.id, args, lambda c, ts: self.history.find(team.id, c, ts))
        elif method == "agents.sessions.rename":
            answer, bug = self.agents.rename(team.id, args)
        else:
            answer, bug = self.agents.suggest(team.id, args)
        if bug:
            with self._lock:
                self.violations.append(f"{method}: {bug}")
        return answer

    def record_response(self, body: dict) -> tuple[int, str]:
        """Keep a body posted to a response_url unless Slack would refuse it or `fail("response_url", …)`
        says otherwise; (the HTTP status, the body) to answer with."""
        refused = problems = None
        if "blocks" in body and blocks_problems(body["blocks"]):
            refused, problems = "invalid_blocks", blocks_problems(body["blocks"])
        elif text_problems(body):
            refused, problems = "msg_too_long", text_problems(body)
        with self._lock:
            if refused:
                self.violations.append(f"response_url: {'; '.join(problems)}")
                return 400, refused
            failure = self._take_failure("response_url")
            if failure is None or failure.applied:
                self.responses.append(body)
        return (failure.status, failure.error) if failure else (200, "ok")

    def start(self) -> FakeSlack:
        self.server.start()
        return self

    def stop(self) -> None:
        self.server.stop()
