"""Forks as Slack agent sessions (docs.slack.dev/ai/agent-sessions), and the DM's suggested prompts: the
AgentSessions port, best effort.

- Off the caller's path: every call runs on a small pool of its own; the calls of one thread's session
  run in the order they were made (created with its title, then processing, active … closed), chained
  after one another, never on the reply's thread. Nothing here raises or makes its caller wait.
- An answer's stream ends with chat.stopStream, whose `session_status` (docs.slack.dev/reference/methods/
  chat.stopStream; Slack's default: active) moves the session too: a page of a longer answer keeps it
  `processing`, a session closed meanwhile stays `closed`, and the `active` after an answer whose last
  stopStream said it already is not sent again.
- A workspace whose Slack refuses session calls outright (`missing_scope` without assistant:write,
  `feature_disabled` where the agent feature is off — assistant.threads.setStatus / setTitle's code, which
  agents.sessions.* succeed — `not_agent_app` from setSuggestedPrompts for an app not declared an agent, an
  older plan that lacks the methods…) is remembered for REMEMBER seconds, logged
  once, and sent none meanwhile: its forks work exactly as without agent sessions. Other failures (a
  thread Slack does not know, 5xx, a lost connection) are logged at INFO and change nothing.
"""
from __future__ import annotations

import logging
import threading
import time
from collections import OrderedDict
from collections.abc import Callable
from concurrent.futures import Executor, Future, wait

from slack_sdk.errors import SlackApiError

from ..domain.agent import Prompt, SessionStatus
from ..domain.model import Fork
from .clients import Clients
from .clients import FAILURES, failure_code

log = logging.getLogger(__name__)

REMEMBER = 3600.0  # seconds a workspace's refusal of session calls is remembered
CLOSED_KEPT = 10_000  # closed sessions remembered per process
# seconds an answer's first words wait at most for its session's `processing` (a call's round trip, not a
# queue: under a burst the words go first)
LANDING = 0.25
REFUSED = frozenset({"missing_scope", "not_allowed", "not_allowed_token_type", "unknown_method", "method_deprecated",
                     "feature_disabled", "not_agent_app", "no_permission", "access_denied",
                     "team_access_not_granted", "ekm_access_denied", "enterprise_is_restricted"})


class SessionCalls:
    def __init__(self, clients: Clients, pool: Executor, clock: Callable[[], float] = time.monotonic):
        """`pool`: every workspace's session calls (made and stopped by the composition root)."""
        self.clients = clients
        self.clock = clock
        self._pool = pool
        self._refused: dict[str, float] = {}  # team → until when its refusal stands
        self._last: dict[tuple[str, str, str], Future] = {}  # a session's latest call, for the next to follow
        # sessions this process closed lately: no status after that (the oldest forgotten past CLOSED_KEPT)
        self._closed: OrderedDict[tuple[str, str, str], None] = OrderedDict()
        self._active_by_stream: set[tuple[str, str, str]] = set()  # sessions an answer's last stopStream left active
        self._lock = threading.Lock()

    def session_opened(self, fork: Fork, title: str) -> None:
        self._session(fork, status=SessionStatus.ACTIVE.value, title=title, initiator_user_id=fork.owner_id)

    def session_status(self, fork: Fork, status: SessionStatus) -> None:
        key = _key(fork.team_id, fork.channel_id, fork.root_ts)
        with self._lock:
            if key in self._closed:
                return  # merged or abandoned while an answer was being written: it stays closed
            if status is SessionStatus.ACTIVE and key in self._active_by_stream:
                self._active_by_stream.discard(key)
                return  # said by the answer's chat.stopStream
            self._active_by_stream.discard(key)
            if status is SessionStatus.CLOSED:
                self._closed[key] = None
                if len(self._closed) > CLOSED_KEPT:
                    self._closed.popitem(last=False)
        self._session(fork, status=status.value)

    def session_renamed(self, fork: Fork, title: str) -> None:
        self._session(fork, method="agents_sessions_rename", title=title)

    def status_on_stop(self, team_id: str, channel_id: str, thread_ts: str | None, more: bool) -> str | None:
        """The `session_status` a chat.stopStream in a fork's thread carries: `closed` for a session closed
        while the answer was written, `processing` while `more` of the answer follows; else None (Slack's
        default, active), as everywhere session calls are refused."""
        if self._refuses(team_id):
            return None
        with self._lock:
            closed = _key(team_id, channel_id, thread_ts) in self._closed
        if closed:
            return SessionStatus.CLOSED.value
        return SessionStatus.PROCESSING.value if more else None

    def stream_ended(self, team_id: str, channel_id: str, thread_ts: str | None) -> None:
        """An answer's last chat.stopStream left its session `active`: the answer's own `active` need not be
        sent — unless a call of the session's is still on its way (its `processing` could land after the stop)."""
        key = _key(team_id, channel_id, thread_ts)
        with self._lock:
            if key not in self._last and key not in self._closed:
                self._active_by_stream.add(key)

    def suggest_prompts(self, team_id: str, dm_channel_id: str, prompts: list[Prompt]) -> None:
        # no thread_ts: in the Agent messaging experience a call with one fails silently
        self._later(team_id, None, "assistant_threads_setSuggestedPrompts", channel_id=dm_channel_id,
                    prompts=[{"title": p.title, "message": p.message} for p in prompts])

    def _session(self, fork: Fork, method: str = "agents_sessions_setStatus", **arguments) -> None:
        if fork.root_ts:
            self._later(fork.team_id, _key(fork.team_id, fork.channel_id, fork.root_ts), method,
                        channel_id=fork.channel_id, thread_ts=fork.root_ts, **arguments)

    def _later(self, team_id: str, key: tuple[str, str, str] | None, method: str, **arguments) -> None:
        if self._refuses(team_id):
            return
        with self._lock:
            before = self._last.get(key) if key else None
            future = self._pool.submit(self._call, before, team_id, method, arguments)
            if key:
                self._last[key] = future
        if key:  # outside the lock: a call done already runs its callback here, at once
            future.add_done_callback(lambda done: self._settled(key, done))

    def _settled(self, key: tuple[str, str, str], done: Future) -> None:
        with self._lock:
            if self._last.get(key) is done:
                del self._last[key]

    def _call(self, before: Future | None, team_id: str, method: str, arguments: dict) -> None:
        if before is not None:  # submitted earlier, so already taken by a worker: this never starves the pool
            wait([before])
        if self._refuses(team_id):
            return
        try:
            getattr(self.clients.for_team(team_id), method)(**arguments)
        except SlackApiError as error:
            code = failure_code(error)
            if code in REFUSED:
                self._refuse(team_id, method, code)
            else:
                log.info("Slack %s failed (%s); the fork goes on without it", method.replace("_", "."), code)
        except FAILURES as error:
            log.info("Slack %s failed (%s); the fork goes on without it", method.replace("_", "."),
                     failure_code(error))
        except Exception:  # noqa: BLE001 - a session call is never worth more than a log line
            log.exception("Slack %s failed", method.replace("_", "."))

    def landed(self, team_id: str, channel_id: str, thread_ts: str | None, timeout: float = LANDING) -> None:
        """Wait (at most `timeout`) for the calls already made for a thread's session to be over: an answer's
        first words appear after its `processing`, not beside it."""
        with self._lock:
            last = self._last.get(_key(team_id, channel_id, thread_ts))
        if last is not None:
            wait([last], timeout=timeout)

    def works_in(self, team_id: str) -> bool:
        """Session calls go out in this workspace (it has not refused them lately)."""
        return not self._refuses(team_id)

    def _refuses(self, team_id: str) -> bool:
        until = self._refused.get(team_id)  # one dict read needs no lock; asked by every call and every answer
        return until is not None and self.clock() < until

    def _refuse(self, team_id: str, method: str, code: str) -> None:
        with self._lock:
            now, known = self.clock(), self._refused.get(team_id)
            first = known is None or now >= known  # calls already under way refuse too: one line for them all
            self._refused[team_id] = now + REMEMBER if first else known
        if first:
            log.warning("Slack refused %s in workspace %s (%s): forks work there without agent sessions (title, "
                        "status, Stop) and suggested prompts; trying again in %d minutes", method.replace("_", "."),
                        team_id, code, REMEMBER // 60)


def _key(team_id: str, channel_id: str, thread_ts: str | None) -> tuple[str, str, str]:
    """A thread's session, as the calls made for it are remembered."""
    return team_id, channel_id, thread_ts or ""
