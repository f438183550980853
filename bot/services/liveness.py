"""What this process holds while it works, and how the work it holds may end early.

What this process holds — session leases, merges, kept deliveries — kept alive by a heartbeat
while it works on them, and handed back at once when it shuts down.

A claim lives `ttl` seconds past its last renewal; the heartbeat renews every claim this process
holds every third of that. So a healthy answer may take as long as it likes (it is never taken over
and never told it was interrupted), and work whose process died is taken over by any replica's
sweep within `ttl` plus one sweep interval.

Stop, everywhere: a person stops the answer being written — in a fork's thread by Slack's own Stop
(agent_session_stopped), at a channel's top level by the answer's Stop button.

- A stop is one conditional write on the reply being streamed (Stops): exactly once whatever arrives
  twice and whichever replica receives it; a stop for an answer that already ended changes nothing.
- The replica streaming the answer obeys it within a second: at once when the stop lands on it (the
  fast path), else through its one watcher, which — only while this process streams something — reads
  the stop requests on the replies it holds, one small query every POLL seconds for all of them (the
  watcher runs on the one thread the composition root gives it, from the process's first answer until
  `close`, and waits without polling while nothing streams: a thread for each answer cost its start-up on
  the answer's path).
- Obeying is the answer's Switch: its model call shuts its stream (no more tokens generated or billed)
  and returns what was written so far; the conversation keeps that as the answer, marked stopped by the
  person, and ends the Slack message with it.
- Nothing more of an answer streams once Stop was pressed, on whichever replica: before each append the
  reply asks its switch (`clear_to_show`), which waits for the watcher's next look — at most POLL, shared
  by every answer this process streams, no query of its own.
A failed poll is logged and tried again at the next one: Stop never costs an answer.
- Who may stop follows the channel's merge policy: with `anyone`, anyone in the channel; with `owner`, the
  people whose turns the answer answers and, in a fork, its owner. A private fork's answers: its owner
  only. Anyone else is told so privately, and the answer goes on.
"""
from __future__ import annotations

import logging
import threading
import time
import uuid
from collections.abc import Callable, Iterator
from concurrent.futures import Executor
from contextlib import contextmanager

from ..domain.model import Channel, Fork
from .policy import not_theirs
from .ports import Audience, Inbox, Leases, Merges, PrivateAnswers, Sessions, Stops

log = logging.getLogger(__name__)


class Liveness:
    def __init__(self, ttl: float, *, inbox: Inbox, leases: Leases, merges: Merges, check: Callable[[str], None]):
        self.inbox, self.leases, self.merges = inbox, leases, merges
        self.check = check  # writes this process's health row; raises when the store can't be written
        self.ttl = ttl
        self.process = uuid.uuid4().hex[:12]
        self._held: dict[str, set[str]] = {"lease": set(), "merge": set(), "delivery": set()}
        self._lock = threading.Lock()

    def healthy(self) -> None:
        """Raises when the store cannot be written."""
        self.check(self.process)

    def new_owner(self) -> str:
        """An owner name for one claim, recognisably this process's in the database."""
        return f"{self.process}:{uuid.uuid4().hex[:16]}"

    @contextmanager
    def holding(self, kind: str, name: str) -> Iterator[str]:
        """Renew `name` (an owner, or a delivery's key) while the block runs."""
        with self._lock:
            self._held[kind].add(name)
        try:
            yield name
        finally:
            with self._lock:
                self._held[kind].discard(name)

    def hold(self, kind: str, name: str) -> None:
        with self._lock:
            self._held[kind].add(name)

    def let_go(self, kind: str, name: str) -> None:
        with self._lock:
            self._held[kind].discard(name)

    def holds(self, kind: str, name: str) -> bool:
        with self._lock:
            return name in self._held[kind]

    def beat(self) -> None:
        """Renew everything held (one write per kind, whatever the count)."""
        leases, merges, deliveries = self._snapshot()
        self.leases.renew_leases(leases, self.ttl)
        self.merges.renew_merges(merges, self.ttl)
        self.inbox.renew(deliveries, self.ttl)

    def release_all(self) -> None:
        """Shutting down: hand every claim back, so another replica resumes the work at once."""
        leases, merges, deliveries = self._snapshot()
        log.info("handing back %s leases, %s merges and %s deliveries", len(leases), len(merges), len(deliveries))
        self.leases.release_leases(leases)
        self.merges.release_merges(merges)
        self.inbox.release(deliveries)

    def _snapshot(self) -> tuple[list[str], list[str], list[str]]:
        with self._lock:
            return list(self._held["lease"]), list(self._held["merge"]), list(self._held["delivery"])


POLL = 0.2  # seconds between the watcher's reads while something streams (and the longest an append waits)


class Switch:
    """One answer's Stop (the StopSignal its model call obeys): thrown once, from any thread."""

    def __init__(self, reply_id: int, looked: Callable[[float], None] = lambda since: None):
        """`looked(since)`: waits (briefly) until the stop requests were read after `since`."""
        self.reply_id = reply_id
        self.stopped_by: str | None = None
        self._close: Callable[[], None] | None = None
        self._lock = threading.Lock()
        self._looked = looked

    def requested(self) -> bool:
        return self.stopped_by is not None

    def clear_to_show(self) -> bool:
        if self.requested():
            return False
        self._looked(time.monotonic())  # a stop pressed on another replica by now is thrown by then
        return not self.requested()

    def on_stop(self, close: Callable[[], None] | None) -> None:
        with self._lock:
            self._close = close
            now = close if close is not None and self.stopped_by is not None else None
        if now is not None:
            _safely(now)

    def stop(self, user_id: str) -> bool:
        """Throw it: True for the first stop; the model call's stream is shut now."""
        with self._lock:
            if self.stopped_by is not None:
                return False
            self.stopped_by, close, self._close = user_id, self._close, None
        if close is not None:
            _safely(close)
        return True


class Stopping:
    def __init__(self, stops: Stops, sessions: Sessions | None = None, poll: float = POLL,
                 merge_policy: Callable[[Channel], str] | None = None, answers: PrivateAnswers | None = None,
                 watcher: Executor | None = None):
        """`merge_policy`: a channel's (None: anyone may stop); `answers`: where a refused Stop is told;
        `watcher`: the one thread the watcher runs on (None: no watcher, stops land only on the fast path)."""
        self.stops = stops
        self.sessions = sessions
        self.poll = poll
        self.merge_policy = merge_policy
        self.answers = answers
        self._held: dict[int, Switch] = {}  # reply id → the switch of an answer this process is writing
        self._lock = threading.Lock()
        self._watcher = watcher
        self._watching = False
        self._closed = False
        self._streaming = threading.Condition(self._lock)  # notified when an answer begins (the watcher may idle)
        self._read = threading.Condition()  # notified after each look, with when it began
        self._last_look = float("-inf")

    @contextmanager
    def holding(self, reply_id: int) -> Iterator[Switch]:
        """The switch of the answer `reply_id` while this process writes it."""
        switch = Switch(reply_id, self._looked_since)
        with self._lock:
            self._held[reply_id] = switch
            if not self._watching and self._watcher is not None:  # the process's first answer: its watcher
                self._watching = True
                self._watcher.submit(self._watch)
            else:
                self._streaming.notify()  # wakes the watcher if it idles; nothing if it does not
        try:
            yield switch
        finally:
            with self._lock:
                self._held.pop(reply_id, None)

    def thread_stopped(self, channel: Channel, thread_ts: str, user_id: str) -> None:
        """Stop pressed on the agent session of a thread: the answer its fork is writing, if any."""
        fork = self.sessions.fork_by_message(channel, thread_ts) if self.sessions else None
        if fork is None:
            return
        reply_id = self.stops.streaming(fork.id) if self._checked(fork) else None
        if reply_id is not None and not self._may_stop(fork.channel, fork, reply_id, user_id):
            self._refuse(Audience(channel.team_id, channel.id, user_id, thread_ts=thread_ts), fork)
            return
        self.session_stopped(fork.id, user_id)

    def session_stopped(self, session_id: int, user_id: str) -> None:
        """Stop pressed on a session: its answer in progress, if any."""
        reply_id = self.stops.stop_in(session_id, user_id)
        if reply_id is not None:
            self._obey(reply_id, user_id)

    def pressed(self, channel: Channel, reply_id: int, user_id: str) -> None:
        """The Stop button of a top-level answer of the channel."""
        if self.merge_policy is not None and self.merge_policy(channel) == "owner" and \
                not self._may_stop(channel, None, reply_id, user_id):
            self._refuse(Audience(channel.team_id, channel.id, user_id), None)
            return
        if self.stops.stop_reply(channel, reply_id, user_id):
            self._obey(reply_id, user_id)

    def _checked(self, fork: Fork) -> bool:
        """Whether who stops an answer of `fork` matters (a private fork's, or under the `owner` policy)."""
        return fork.private or (self.merge_policy is not None and self.merge_policy(fork.channel) == "owner")

    def _may_stop(self, channel: Channel, fork: Fork | None, reply_id: int, user_id: str) -> bool:
        if fork is not None and fork.private:
            return user_id == fork.owner_id
        return (fork is not None and user_id == fork.owner_id) or user_id in self.stops.askers(reply_id)

    def _refuse(self, audience: Audience, fork: Fork | None) -> None:
        if self.answers is None:
            return
        if fork is not None and fork.private:
            self.answers.tell(audience, not_theirs(fork, "stop its answers"))
            return
        who = f"<@{fork.owner_id}>, who opened fork {fork.label}, or " if fork is not None else ""
        self.answers.tell(audience, f"Only {who}whoever asked may stop this answer here: it goes on.")

    def _obey(self, reply_id: int, user_id: str) -> None:
        with self._lock:
            switch = self._held.get(reply_id)
        if switch is not None:  # the fast path: this process writes it; else its writer's watcher will see
            switch.stop(user_id)

    def close(self) -> None:
        """The process is leaving (bot/entrypoints/runtime.py): the watcher ends after its current look."""
        with self._lock:
            self._closed = True
            self._streaming.notify()

    def _watch(self) -> None:
        while True:
            with self._lock:
                while not self._held and not self._closed:  # nothing streams: no query, no wake-up, until it does
                    self._streaming.wait()
                if self._closed:
                    return
            time.sleep(self.poll)  # first wait: an answer shorter than that costs no query
            with self._lock:
                if not self._held:
                    continue
                held = dict(self._held)
            began = time.monotonic()
            try:
                asked = self.stops.requested(list(held))
            except Exception:  # noqa: BLE001 - the one watcher must outlive a store outage
                log.warning("could not read stop requests; trying again", exc_info=True)
                continue
            for reply_id, user_id in asked.items():
                held[reply_id].stop(user_id)
            with self._read:
                self._last_look = began
                self._read.notify_all()

    def _looked_since(self, since: float) -> None:
        """Wait until a look that began after `since` is over (at most two polls: a store that cannot be
        read never holds an answer back); at once without a watcher."""
        if self._watcher is None:
            return
        with self._read:
            self._read.wait_for(lambda: self._last_look > since, timeout=2 * self.poll + 0.5)


def _safely(close: Callable[[], None]) -> None:
    try:
        close()
    except Exception:  # noqa: BLE001 - a stream that will not close still ends when its reader sees the stop
        log.warning("closing a stopped answer's stream failed", exc_info=True)
