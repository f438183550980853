"""Modals as Slack runs them: trigger ids, `views.open` / `views.update` / `views.push`, the stack of
views a person sees, and what the app's answer to a submission does to it.

Invariants (docs.slack.dev/reference/methods/views.open, views.update, views.push, /surfaces/modals):
- A trigger id comes only from an interaction Slack delivered (the harness issues one per slash
  command, button click or shortcut). It is good once (`exchanged_trigger_id` after), for 3 seconds of
  wall time (`expired_trigger_id`), with a token of its own team; anything else is `invalid_trigger_id`.
- `views.publish` replaces a person's Home tab (kept per team and person, with a hash like a modal's).
- `views.open` opens a new stack for the trigger's person (closing any stack they had); `views.push`
  needs a trigger from inside an open modal and holds at most 3 views (`push_limit_reached`);
  `views.update` finds the view by view_id or external_id (`not_found`) and refuses a stale `hash`
  (`hash_conflict`). `external_id` is unique in a team (`duplicate_external_id`).
- A stored view is Slack's view object: id, team_id, app_id, bot_id, app_installed_team_id, hash,
  root_view_id, previous_view_id, ids filled in, and `state.values` with the initial values.
- The app's reply to a view_submission (see `submitted`): an empty 2xx body closes the view; a
  `response_action` of `errors` (keyed by block_ids of the view's input blocks) keeps it open with the
  errors shown; `update` replaces it; `push` stacks a view; `clear` closes the stack. Anything else,
  or a reply after 3 seconds, is what Slack shows as "We had some trouble connecting" — a problem.
"""
from __future__ import annotations

import itertools
import json
import threading
import time
from dataclasses import dataclass, field

from .block_kit import view_problems
from .slack_teams import APP_ID, Team, Teams
from .view_state import initial_state, with_ids

TRIGGER_LIFETIME = 3.0
STACK_LIMIT = 3


@dataclass
class Trigger:
    id: str
    team: str
    user: str
    issued: float
    view_id: str | None = None  # the modal the interaction happened in
    used: bool = False


@dataclass
class OpenedView:
    """A modal Slack showed: `view` is Slack's view object as it is now."""
    view: dict
    user: str
    stack: list[str]  # ids of the open views of this view's stack, root first (shared by the stack)
    closed: bool = False
    errors: dict = field(default_factory=dict)  # what a response_action "errors" shows

    @property
    def id(self) -> str:
        return self.view["id"]

    @property
    def values(self) -> dict:
        return self.view["state"]["values"]


class Views:
    def __init__(self, teams: Teams):
        self.teams = teams
        self.views: dict[str, OpenedView] = {}
        self.homes: dict[tuple[str, str], OpenedView] = {}  # (team, user) -> the Home tab published for them
        self.triggers: dict[str, Trigger] = {}
        self.problems: list[str] = []  # replies to submissions Slack could not use
        self._numbers = itertools.count(1)
        self._lock = threading.Lock()

    # triggers ---------------------------------------------------------------------------

    def issue_trigger(self, team: str, user: str, view_id: str | None = None) -> str:
        n = next(self._numbers)
        trigger = Trigger(f"{1_800_000_000 + n}.{7_890_123 + n}.{(n * 2654435761) % 16**12:012x}",
                          team, user, time.monotonic(), view_id)
        with self._lock:
            self.triggers[trigger.id] = trigger
        return trigger.id

    def expire_triggers(self) -> None:
        """Let 3 seconds pass for every trigger issued so far, without waiting."""
        with self._lock:
            for trigger in self.triggers.values():
                trigger.issued -= TRIGGER_LIFETIME

    def _exchange(self, team: Team, trigger_id) -> tuple[Trigger | None, str | None]:
        with self._lock:
            trigger = self.triggers.get(trigger_id) if isinstance(trigger_id, str) else None
            if trigger is None or trigger.team != team.id:
                return None, "invalid_trigger_id"
            if trigger.used:
                return None, "exchanged_trigger_id"
            if time.monotonic() - trigger.issued > TRIGGER_LIFETIME:
                return None, "expired_trigger_id"
            trigger.used = True
            return trigger, None

    # methods ----------------------------------------------------------------------------

    def open(self, team: Team, args: dict) -> dict:
        trigger, error = self._exchange(team, args.get("trigger_id"))
        if error:
            return {"ok": False, "error": error}
        with self._lock:
            for opened in list(self.views.values()):
                if opened.user == trigger.user and opened.view["team_id"] == team.id and not opened.closed:
                    self._close(opened.stack)
            refused = self._taken_external_id(team, args["view"])
            if refused:
                return refused
            opened = self._store(team, trigger.user, args["view"], stack=[])
        return {"ok": True, "view": opened.view}

    def push(self, team: Team, args: dict) -> dict:
        trigger, error = self._exchange(team, args.get("trigger_id"))
        if error:
            return {"ok": False, "error": error}
        with self._lock:
            below = self.views.get(trigger.view_id or "")
            if below is None or below.closed:
                return {"ok": False, "error": "not_found"}
            if len(below.stack) >= STACK_LIMIT:
                return {"ok": False, "error": "push_limit_reached"}
            refused = self._taken_external_id(team, args["view"])
            if refused:
                return refused
            opened = self._store(team, trigger.user, args["view"], stack=below.stack, root=below.view["root_view_id"])
        return {"ok": True, "view": opened.view}

    def update(self, team: Team, args: dict) -> dict:
        with self._lock:
            opened = self._find(team, args.get("view_id"), args.get("external_id"))
            if opened is None or opened.closed:
                return {"ok": False, "error": "not_found"}
            if args["view"].get("type") != opened.view["type"]:
                return {"ok": False, "error": "invalid_arguments"}
            if args.get("hash") and args["hash"] != opened.view["hash"]:
                return {"ok": False, "error": "hash_conflict"}
            refused = self._taken_external_id(team, args["view"], opened.id)
            if refused:
                return refused
            self._replace(opened, args["view"])
        return {"ok": True, "view": opened.view}

    def publish(self, team: Team, args: dict) -> dict:
        """views.publish: the person's Home tab, replaced whole; a stale `hash` is `hash_conflict`."""
        key = (team.id, args["user_id"])
        with self._lock:
            home = self.homes.get(key)
            if home and args.get("hash") and args["hash"] != home.view["hash"]:
                return {"ok": False, "error": "hash_conflict"}
            if home is None:
                home = OpenedView({"id": f"V0HOME{next(self._numbers):05d}", "team_id": team.id, "type": "home",
                                   "blocks": [], "private_metadata": "", "callback_id": "", "state": {"values": {}},
                                   "hash": "", "title": None, "clear_on_close": False, "notify_on_close": False,
                                   "close": None, "submit": None, "previous_view_id": None, "root_view_id": None,
                                   "app_id": APP_ID, "external_id": "", "app_installed_team_id": team.id,
                                   "bot_id": team.bot_id}, args["user_id"], [])
                home.view["root_view_id"] = home.view["id"]
                self.homes[key] = home
            self._replace(home, args["view"])
            return {"ok": True, "view": home.view}

    # what the person does ---------------------------------------------------------------

    def submitted(self, view_id: str, state: dict, status: int, body: str, elapsed: float) -> None:
        """Apply the app's HTTP reply to a view_submission, as Slack would."""
        with self._lock:
            opened = self.views[view_id]
            opened.view["state"] = state
            problem = self._reply_problem(opened, status, body, elapsed)
            if problem:
                self.problems.append(f"view_submission {view_id}: {problem}")
                return
            answer = json.loads(body) if body.strip() else {}
            action = answer.get("response_action")
            opened.errors = answer.get("errors", {}) if action == "errors" else {}
            if action is None:  # back to the view below, if any
                self._close(opened.stack[opened.stack.index(view_id):])
            elif action == "update":
                self._replace(opened, answer["view"])
            elif action == "push":
                self._store(self.teams.get(opened.view["team_id"]), opened.user, answer["view"], stack=opened.stack,
                            root=opened.view["root_view_id"])
            elif action == "clear":
                self._close(opened.stack)

    def closed(self, view_id: str, cleared: bool = False) -> OpenedView:
        """The person closes the view (and those above it), or the whole stack when `cleared`."""
        with self._lock:
            opened = self.views[view_id]
            if not opened.closed:
                self._close(opened.stack if cleared else opened.stack[opened.stack.index(view_id):])
            return opened

    def all(self) -> list[OpenedView]:
        with self._lock:
            return list(self.views.values())

    def _close(self, view_ids: list[str]) -> None:
        for view_id in list(view_ids):
            view = self.views[view_id]
            view.closed = True
            view.stack.remove(view_id)

    def _reply_problem(self, opened: OpenedView, status: int, body: str, elapsed: float) -> str | None:
        if elapsed > TRIGGER_LIFETIME:
            return f"answered after {elapsed:.1f} s (Slack waits 3 s)"
        if not 200 <= status < 300:
            return f"answered HTTP {status}"
        if not body.strip():
            return None
        try:
            answer = json.loads(body)
        except ValueError:
            return f"answered a body that is not JSON: {body[:80]!r}"
        action = answer.get("response_action") if isinstance(answer, dict) else None
        if action == "errors":
            inputs = {b["block_id"] for b in opened.view["blocks"] if b.get("type") == "input"}
            errors = answer.get("errors")
            if not isinstance(errors, dict) or not errors or not set(errors) <= inputs:
                return f"errors must name input blocks of the view ({sorted(inputs)}), not {errors!r}"
            return None
        if action in ("update", "push"):
            problems = view_problems(answer.get("view"))
            if action == "push" and len(opened.stack) >= STACK_LIMIT:
                problems.append("push_limit_reached")
            return "; ".join(problems) or None
        if action == "clear" or (isinstance(answer, dict) and not answer):
            return None
        return f"unknown response_action {action!r}"

    # storage ----------------------------------------------------------------------------

    def _store(self, team: Team, user: str, view: dict, stack: list[str], root: str | None = None) -> OpenedView:
        view_id = f"V0FAKE{next(self._numbers):05d}"
        root = root or view_id
        stored = {"id": view_id, "team_id": team.id, "type": view["type"], "blocks": [], "private_metadata": "",
                  "callback_id": "", "state": {"values": {}}, "hash": "", "title": None, "clear_on_close": False,
                  "notify_on_close": False, "close": None, "submit": None,
                  "previous_view_id": stack[-1] if stack else None, "root_view_id": root, "app_id": APP_ID,
                  "external_id": "", "app_installed_team_id": team.id, "bot_id": team.bot_id}
        stack.append(view_id)
        opened = OpenedView(stored, user, stack)
        self._replace(opened, view)
        self.views[view_id] = opened
        return opened

    def _replace(self, opened: OpenedView, view: dict) -> None:
        stored = opened.view
        for key in ("title", "close", "submit", "private_metadata", "callback_id", "external_id",
                    "clear_on_close", "notify_on_close"):
            if key in view:
                stored[key] = view[key]
        stored["blocks"] = with_ids(view.get("blocks") or [], f"{stored['id']}/{time.monotonic_ns()}")
        stored["state"] = initial_state(stored["blocks"])
        stored["hash"] = f"{int(time.time())}.{next(self._numbers):08x}"
        opened.errors = {}

    def _find(self, team: Team, view_id, external_id) -> OpenedView | None:
        every = [*self.views.values(), *self.homes.values()]
        found = next((v for v in every if (v.id == view_id if view_id else
                                           external_id and v.view["external_id"] == external_id)), None)
        return found if found is not None and found.view["team_id"] == team.id else None

    def _taken_external_id(self, team: Team, view: dict, keep: str | None = None) -> dict | None:
        external_id = view.get("external_id")
        taken = external_id and any(v.view["external_id"] == external_id and v.view["team_id"] == team.id
                                    and v.id != keep for v in self.views.values())
        return {"ok": False, "error": "duplicate_external_id"} if taken else None
