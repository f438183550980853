"""Any thread adopted: mentioning Threadfork in a channel thread that is not a fork makes that thread
an inherited fork on the spot — under a person's message or under a bot post that is no fork root.

Exactly once, whatever arrives twice (a mention comes as `message` and `app_mention`; two people may
mention the bot at once): one caller wins Sessions.adopt_thread, which creates the fork, indexes the
thread's root and leases the fork to the winner in one transaction. Every other caller gets the
fork and goes on as in any fork's thread: its message is stored and waits, because nobody answers a
leased session but its holder. Only the winner reads the thread (conversations.replies, once),
stores its earlier messages as the fork's first turn (seq 1, kept for them, so they come before
every message that arrived meanwhile), posts the one-line note and releases the lease; then its
own mention is answered, in order, with everything that waited.

Only the messages before the mention are read. Slack may let the bot read a thread slowly (an app outside
the Marketplace: 15 messages a minute): when reading takes more than STILL_READING_AFTER seconds, the thread
is told once that the bot is still reading, so nobody takes the silence for a failure.

The adopted root is never changed by the bot (it may be a person's message): the gateway's root
refresh skips adopted forks.
"""
from __future__ import annotations

import logging
from collections.abc import Iterator
from contextlib import contextmanager

from ..domain import transcript
from ..domain.agent import session_title
from ..domain.errors import ChatUnavailable
from ..domain.model import Channel, ContextSize, Fork
from ..domain.settings import ChannelSettings
from .liveness import Liveness
from .ports import (Adopted, Adoptions, AgentSessions, BotUsers, ForkPosts, Later, People, Sessions, Shared,
                    ThreadMessage, Leases, Views)

log = logging.getLogger(__name__)

UNREAD = " (I couldn't read the messages above, so I start from the channel's conversation.)"
STILL_READING_AFTER = 4.0  # seconds of reading before the thread is told
STILL_READING = ("📖 I'm still reading the messages above (Slack lets me read this thread only slowly); I'll answer "
                 "as soon as I have them.")


def adoption_note(fork: Fork, read: bool = True) -> str:
    """The one line posted in an adopted thread."""
    return (f"🧵 This thread is now fork #{fork.number}: I'll answer every message here. React ✅ to merge it "
            "into the channel's conversation, or ❌ on its first message (or `@Threadfork abandon`) to abandon "
            "it." + ("" if read else UNREAD))


class Adoption:
    def __init__(self, posts: ForkPosts, people: People, shared: Shared, liveness: Liveness,
                 bot_user_id: BotUsers, defaults: ChannelSettings = ChannelSettings(),
                 agent: AgentSessions | None = None, later: Later | None = None,
                 *, sessions: Sessions, adoptions: Adoptions, leases: Leases, views: Views):
        self.agent = agent  # the adopted thread becomes an agent session (best effort)
        self.later = later  # times the still-reading note (None: never told)
        self.defaults = defaults  # what the adopted fork keeps where its channel chose nothing
        self.sessions, self.adoptions, self.leases, self.views = sessions, adoptions, leases, views
        self.posts = posts
        self.people = people
        self.shared = shared
        self.liveness = liveness
        self.bot_user_id = bot_user_id
        self.still_reading_after = STILL_READING_AFTER  # seconds of reading before the thread is told

    def adopt(self, channel: Channel, thread_ts: str, user_id: str, mention_ts: str) -> Adopted:
        """The fork thread `thread_ts` is (made now, by the one caller that gets `new`); the messages
        posted before `mention_ts` are its first turn."""
        owner = self.liveness.new_owner()
        with self.liveness.holding("lease", owner):
            adopted = self.adoptions.adopt_thread(channel, thread_ts, user_id, owner, self.liveness.ttl,
                                                        self.defaults)
            if not adopted.new:
                return adopted
            try:
                self._take_in(adopted.fork, mention_ts)
            finally:
                self.leases.release(adopted.fork.id, owner)
        return Adopted(self.sessions.fork(adopted.fork.id), new=True)

    def _take_in(self, fork: Fork, mention_ts: str) -> None:
        log.info("adopting thread %s as fork %s", fork.root_ts, fork.id)
        try:
            with self._told_if_slow(fork):
                earlier = [m for m in self.shared.thread_messages(fork.channel, fork.root_ts, before=mention_ts)
                           if transcript.before(m.ts, mention_ts)]
            read = True
        except ChatUnavailable:
            earlier, read = [], False  # the gateway logged why; the fork starts from the channel alone
        inherited = (self.views.context_size(fork.parent_id, fork.fork_point_seq) if fork.fork_point_seq
                     else ContextSize(0, 0))
        self.adoptions.complete_adoption(
            fork.id, transcript.topic(earlier[0].text) if earlier else "", inherited,
            transcript.transcript([self._quoted(fork.team_id, m) for m in earlier]), transcript.SPEAKER,
            [m.ts for m in earlier])
        if self.agent:
            titled = self.sessions.fork(fork.id)  # with the topic its first message gave it
            self.agent.session_opened(titled, session_title(titled))
        try:
            self.posts.note_in_thread(fork, adoption_note(fork, read))
        except Exception:
            log.exception("posting the adoption note of fork %s failed", fork.id)

    @contextmanager
    def _told_if_slow(self, fork: Fork) -> Iterator[None]:
        """The thread told once that the bot is still reading if the block takes more than `still_reading_after`
        seconds; said in full before the block's caller goes on."""
        say = lambda: self._say_still_reading(fork)  # noqa: E731
        cancel = self.later.after(self.still_reading_after, say) if self.later else None
        try:
            yield
        finally:
            if cancel:
                cancel()

    def _say_still_reading(self, fork: Fork) -> None:
        try:
            self.posts.note_in_thread(fork, STILL_READING)
        except Exception:
            log.exception("posting the still-reading note of fork %s failed", fork.id)

    def _quoted(self, team_id: str, message: ThreadMessage) -> transcript.Quoted:
        if message.user_id and message.user_id == self.bot_user_id(team_id):
            return transcript.Quoted(message.text, yours=True, files=message.files)
        name = self.people.display_name(team_id, message.user_id) if message.user_id else message.name
        return transcript.Quoted(message.text, message.user_id, name, files=message.files)
