"""People's display names and whether they are workspace admins, looked up with users.info at most once
an hour per person and process (the name and the roles come in one answer), in each workspace with that
workspace's client (a user id means nothing outside its team). A role changed in Slack is seen within the
hour.

Names are wanted beside people's words (the speaker line Claude reads) and in Claude's answers,
where a mention `<@U…>` is shown as the person's name instead of notifying them. Every outcome is
remembered for NAME_TTL, a failed lookup too (an id Claude made up is asked about once an hour, not
at every streamed update); callers asking about one person at once share one lookup (a mention
arrives as `message` and `app_mention` together); and one text asks about at most
NEW_NAMES_PER_TEXT people not yet known: the rest are shown by their ids.
"""
from __future__ import annotations

import logging
import threading
import time
from collections import OrderedDict
from collections.abc import Callable

from slack_sdk import WebClient
from slack_sdk.errors import SlackApiError

from ..domain.text import NameOf, storable

log = logging.getLogger(__name__)

NAME_TTL = 3600.0  # people rename themselves; an hour-old name is fine beside their words
NAMES_KEPT = 10_000
NEW_NAMES_PER_TEXT = 5
LOOKUP_WAIT = 10.0  # seconds a caller waits for another's lookup of the same person
_UNKNOWN = object()


class Names:
    def __init__(self, client_for: Callable[[str], WebClient], clock=time.monotonic):
        self.client_for = client_for  # team → its client (bot/slack/clients.py)
        self.clock = clock
        # (team, user) → (their name, whether an admin or owner (None: Slack would not say), when asked)
        self._names: OrderedDict[tuple[str, str], tuple[str | None, bool | None, float]] = OrderedDict()
        self._asking: dict[tuple[str, str], threading.Event] = {}  # lookups under way
        self._lock = threading.Lock()

    def __call__(self, team_id: str, user_id: str) -> str | None:
        """The person's name (None if Slack would not say); users.info once an hour at most."""
        known = self._known((team_id, user_id))
        return self._look_up((team_id, user_id)) if known is _UNKNOWN else known

    def admin(self, team_id: str, user_id: str) -> bool:
        """Whether the person is a workspace admin or owner, from the same users.info answer as their name.
        A refusal is not taken as an answer here (a person waits to be let in or not): Slack is asked again,
        and its SlackApiError raised."""
        person = (team_id, user_id)
        with self._lock:
            cached = self._names.get(person)
        if cached is None or cached[1] is None or self.clock() - cached[2] >= NAME_TTL:
            self._ask_slack(person, raising=True)
            with self._lock:
                cached = self._names[person]
        return bool(cached[1])

    def for_text(self, team_id: str) -> NameOf:
        """A lookup for one text: known names, and at most NEW_NAMES_PER_TEXT new users.info calls."""
        left = [NEW_NAMES_PER_TEXT]

        def name_of(user_id: str) -> str | None:
            known = self._known((team_id, user_id))
            if known is not _UNKNOWN:
                return known
            if left[0] <= 0:
                return None
            left[0] -= 1
            return self._look_up((team_id, user_id))

        return name_of

    def _known(self, person: tuple[str, str]):
        with self._lock:
            cached = self._names.get(person)
        return cached[0] if cached and self.clock() - cached[2] < NAME_TTL else _UNKNOWN

    def _look_up(self, person: tuple[str, str]) -> str | None:
        """users.info for a person, unless another caller is already asking: then its answer."""
        with self._lock:
            asking = self._asking.get(person)
            mine = asking is None
            if mine:
                asking = self._asking[person] = threading.Event()
        if not mine:
            asking.wait(LOOKUP_WAIT)
            known = self._known(person)
            return None if known is _UNKNOWN else known
        try:
            return self._ask_slack(person)
        finally:
            with self._lock:
                del self._asking[person]
            asking.set()

    def _ask_slack(self, person: tuple[str, str], raising: bool = False) -> str | None:
        team_id, user_id = person
        try:
            user = self.client_for(team_id).users_info(user=user_id)["user"]
            profile = user.get("profile") or {}
            name = profile.get("display_name") or profile.get("real_name") or user.get("real_name") or user.get("name")
            name = storable(name) if name else None  # it reaches the database in speaker lines
            admin = bool(user.get("is_admin") or user.get("is_owner") or user.get("is_primary_owner"))
        except SlackApiError as error:
            if raising:
                raise
            log.warning("users.info failed for %s: %s", user_id, error.response.get("error"))
            name, admin = None, None  # remembered too: asking again within the hour would get the same answer
        except Exception as error:  # noqa: BLE001 - a name is optional; Slack unreachable is not remembered
            if raising:
                raise
            log.warning("users.info failed for %s: %s", user_id, type(error).__name__)
            return None
        with self._lock:
            self._names[person] = (name, admin, self.clock())
            self._names.move_to_end(person)
            while len(self._names) > NAMES_KEPT:
                self._names.popitem(last=False)
        return name
