"""Everything people do to messages rather than in them: reactions (✅ merge, ❌ abandon, 🔁 retry),
the Merge/Abandon buttons, the message shortcuts, edits and deletions, and opening App Home."""
from __future__ import annotations

from collections.abc import Sequence

from ..domain.commands import strip_mention
from ..domain.errors import ChatUnavailable, ThreadforkError
from ..domain.model import Channel, Fork, ForkStatus
from ..domain.text import SharedMessage, with_shared
from ..infrastructure import metrics
from .access import Access, SpendCaps
from .conversation import Conversation, Speaker
from .forks import Forks
from .ports import (Audience, BotUsers, Feedback, Files, Memories, People, PrivateAnswers, Screens, Sessions, Spending,
                    TurnEdits, Views)
from .opening import once_opened
from .refusals import refuse

MERGE_REACTIONS = frozenset({"white_check_mark", "heavy_check_mark"})
ABANDON_REACTIONS = frozenset({"x"})
RETRY_REACTIONS = frozenset({"repeat"})
class Gestures:
    def __init__(self, answers: PrivateAnswers, screens: Screens, people: People,
                 conversation: Conversation, forks: Forks, bot_user_id: BotUsers, access: Access,
                 caps: SpendCaps | None = None,
                 *, sessions: Sessions, edits: TurnEdits, views: Views, files: Files, feedback: Feedback,
                    spending: Spending, memories: Memories):
        self.memories = memories  # App Home shows each channel's memory size
        self.access = access
        self.caps = caps  # at the monthly spend cap a retry makes no model call
        self.sessions = sessions
        self.edits = edits
        self.views = views
        self.files = files
        self.ratings = feedback
        self.spending = spending
        self.answers = answers
        self.screens = screens
        self.people = people
        self.conversation = conversation
        self.forks = forks
        self.bot_user_id = bot_user_id

    def reaction(self, channel: Channel, ts: str, user_id: str, name: str) -> None:
        base = name.split("::")[0]  # skin tones arrive as "x::skin-tone-2"
        if base in RETRY_REACTIONS and self.access.refusal(channel, user_id) is None:
            capped = self.caps.refusal(channel, self.caps.read(channel).cap) if self.caps else None
            if capped:
                self.answers.tell(Audience(channel.team_id, channel.id, user_id), capped)
                return
            session_id = self.edits.retry_turn(channel, ts)
            if session_id is not None:
                self.conversation.drain(session_id)
            return
        if base not in MERGE_REACTIONS | ABANDON_REACTIONS:
            return
        fork = self.sessions.fork_by_message(channel, ts)
        if fork is None or (base in ABANDON_REACTIONS and fork.root_ts != ts):
            return
        audience = Audience(channel.team_id, channel.id, user_id, thread_ts=fork.root_ts)
        if self.access.admits(audience):
            self._act(fork, user_id, "merge" if base in MERGE_REACTIONS else "abandon", audience, "reaction")

    def carry_on(self, session_id: int, reply_id: int, user_id: str, channel: Channel) -> None:
        """Continue under an answer cut at its length limit: the answer is carried on in its place."""
        try:
            session = self.sessions.session(session_id)
        except Exception:  # noqa: BLE001 - a session that no longer exists
            session = None
        if session is None or (session.team_id, session.channel_id) != (channel.team_id, channel.id) or \
                self.access.refusal(channel, user_id) is not None:
            return
        if session.fork is not None and session.fork.status is not ForkStatus.OPEN:
            self.answers.tell(Audience(channel.team_id, channel.id, user_id, session.fork.root_ts),
                              f"Fork {session.fork.label} is closed; its answers can no longer be continued.")
            return
        capped = self.caps.refusal(channel, self.caps.read(channel).cap) if self.caps else None
        if capped:
            self.answers.tell(Audience(channel.team_id, channel.id, user_id), capped)
            return
        self.conversation.carry_on(session, Speaker(user_id, None), reply_id)

    def button(self, fork_id: int, user_id: str, verb: str, channel: Channel) -> None:
        """The Merge or Abandon button on a fork root, reminder or budget notice."""
        fork = self.sessions.fork(fork_id)
        audience = Audience(channel.team_id, channel.id, user_id)
        if fork is None or fork.channel != channel:
            self.answers.tell(audience, "That fork no longer exists.")
            return
        fork = self._opened(fork)
        if fork.root_ts is None:
            self.answers.tell(audience, f"Fork #{fork.number} is still opening; try again in a moment.")
            return
        self._act(fork, user_id, verb, audience, "button")

    def _opened(self, fork: Fork) -> Fork:
        """The fork once its root's ts is recorded. Slack shows a message before its poster has the answer, so
        a click can come before the opener (this process or another) records the root it just posted; acting
        then would update no root and post its note in the channel instead of the thread."""
        return once_opened(fork, lambda f: f.root_ts is not None or f.status is not ForkStatus.OPEN,
                           lambda: self.sessions.fork(fork.id))

    def fork_from_message(self, channel: Channel, user_id: str, message_ts: str, thread_ts: str | None,
                          response_url: str | None) -> None:
        """A fork of the channel's conversation up to that message; on a fork's message, a fork of
        that fork up to it (on its root: from the fork's latest turn)."""
        audience = Audience(channel.team_id, channel.id, user_id, response_url=response_url)
        in_thread = bool(thread_ts) and thread_ts != message_ts
        parent = self.sessions.fork_by_message(channel, thread_ts if in_thread else message_ts)
        if in_thread and parent is None:
            self.answers.tell(audience, "“Fork from here” works on the channel's conversation and inside forks, "
                                        "not in other threads.")
            return
        try:
            speaker = Speaker(user_id, self.people.display_name(channel.team_id, user_id))
            origin = message_ts if parent is None or message_ts != parent.root_ts else None
            self.forks.open(channel, speaker, "--inherit", origin_ts=origin, parent=parent)
        except ThreadforkError as error:
            refuse(self.answers, audience, error)

    def merge_from_message(self, channel: Channel, user_id: str, message_ts: str, thread_ts: str | None,
                           response_url: str | None) -> None:
        audience = Audience(channel.team_id, channel.id, user_id, response_url=response_url)
        fork = self.sessions.fork_by_message(channel, thread_ts or message_ts)
        if fork is None:
            self.answers.tell(audience, "“Merge this fork” works on the messages of a fork's thread.")
            return
        self._act(fork, user_id, "merge", audience, "shortcut")

    def edit_message(self, channel: Channel, ts: str, user_id: str, text: str,
                     shared: Sequence[SharedMessage] = ()) -> None:
        """The edited words, with the messages it shares quoted after them as when it was a turn."""
        words = strip_mention(text, self.bot_user_id(channel.team_id))
        self.edits.edit_turn(channel, ts, user_id, with_shared(words, shared))

    def delete_message(self, channel: Channel, ts: str) -> None:
        self.edits.delete_turn(channel, ts)

    def feedback(self, channel: Channel, message_ts: str, user_id: str, value: str) -> None:
        """👍 or 👎 on an answer or a summary: the person's first press on it counts; no model call."""
        if value in ("good", "bad") and channel.id and message_ts:
            self.ratings.record(channel, message_ts, user_id, value)

    def file_deleted(self, slack_file_id: str) -> None:
        """Deleted in Slack: no turn sends it to Claude again (the turns' words stay)."""
        if slack_file_id:
            self.files.forget_shared(slack_file_id)

    def files_deleted(self, channel: Channel, ts: str) -> None:
        """A message's files became tombstones."""
        self.files.forget_files_of(channel, ts)

    def home_opened(self, team_id: str, user_id: str) -> None:
        """Your open forks and the token economy; for the workspace's admins, each channel's spend this month."""
        listings = self.forks.listings(self.sessions.open_forks_of(team_id, user_id))
        months = self.spending.months(team_id)
        self.screens.publish_home(team_id, user_id, listings, self.views.economy(team_id, user_id),
                                  months if months and self._admin(team_id, user_id) else None,
                                  self.memories.sizes(team_id))

    def _admin(self, team_id: str, user_id: str) -> bool:
        try:
            return self.access.is_admin(team_id, user_id)
        except ChatUnavailable:  # Slack won't say: nothing is shown that only admins may see
            return False

    def _act(self, fork: Fork, user_id: str, verb: str, audience: Audience, gesture: str) -> None:
        try:
            if verb == "merge":
                metrics.merge(gesture, self.forks.merge, fork, user_id)
            else:
                self.forks.abandon(fork, user_id)
        except ThreadforkError as error:
            refuse(self.answers, audience, error)
