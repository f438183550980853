"""The outbound side: every Slack port of the use cases (Replies, ForkPosts, PrivateAnswers, Screens, People,
Shared: bot/services/ports/chat.py) implemented by one SlackChat with slack-sdk's WebClient.

Every call goes to SLACK_API_URL with the bot token of the workspace it concerns (clients.py: the
fork's, the place's or the audience's team), retried as clients.py says. Slack
errors, 5xx and lost connections are logged with the method and Slack's error code (never the
token) and, where a person waits, raised as ChatUnavailable with a plain explanation.

People's display names and whether they are workspace admins, looked up with users.info at most once
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
from collections.abc import Callable, Iterator
from contextlib import contextmanager

from slack_sdk import WebClient
from slack_sdk.errors import SlackApiError

from ..domain.errors import ChatUnavailable
from ..domain.memory import MemoryEntry
from ..domain.model import Channel, ChannelEconomy, ContextReport, Draft, Fork, ForkListing, ForkStats, ForkStatus
from ..domain.settings import ChannelSettings, Choices
from ..domain.spend import Spent
from ..domain.text import NameOf, neutralise, storable
from ..services.ports import Audience, Place, StopSignal, ThreadMessage
from . import drafts, memory_view, render, settings_view, threads, views
from .agent_sessions import SessionCalls
from .clients import FAILURES, Clients, PooledWebhookClient, failure_code, retry_handlers
from .downloads import Downloads
from .paging import Pacing
from .reply import ChannelReply, Reactions
from .thread_reply import ThreadReply


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


log = logging.getLogger(__name__)

_EXPLAINED = {
    "not_in_channel": "I'm not in this channel — invite me with `/invite @Threadfork` and try again.",
    "channel_not_found": "I can't see this channel — invite me with `/invite @Threadfork` and try again.",
    "ratelimited": "Slack is rate-limiting me right now — try again in a minute.",
    "invalid_auth": "My Slack token is not valid — ask the admin to check SLACK_BOT_TOKEN.",
}
UNREACHABLE = "I can't reach Slack right now — try again in a minute."
UNWELL = "Slack is having trouble right now — try again in a minute."


class SlackChat:
    def __init__(self, clients: Clients, download: Downloads, sessions: SessionCalls | None = None,
                 pacing: Pacing | None = None, *, reactions: Reactions):
        self.clients = clients
        self.reactions = reactions  # each reply's 👀 while no text is visible
        self.pacing = pacing or Pacing()  # how often an answer being written is shown anew
        self.download = download  # (file) -> its bytes
        self.sessions = sessions  # a fork's agent session shows Claude at work; without one, the 👀 reaction
        self.names = Names(clients.for_team)
        # per team (Slack's limits are per workspace): monotonic time chat.startStream was rate-limited until
        self.streams_resume_at: dict[str, float] = {}

    def client_for(self, team_id: str) -> WebClient:
        """The team's client; raises ChatUnavailable when the team has no installation."""
        return self.clients.for_team(team_id)

    def display_name(self, team_id: str, user_id: str) -> str | None:
        """The name Claude sees beside a person's words; users.info once an hour per person at most."""
        return self.names(team_id, user_id)

    def markdown(self, team_id: str, text: str) -> str:
        """Claude's Markdown as posted: it cannot ping or phish, and people it mentions are shown by name."""
        return neutralise(text, self.names.for_text(team_id))

    def begin_reply(self, place: Place, stop: StopSignal | None = None) -> ChannelReply | ThreadReply:
        """A thread is a fork's: where its workspace takes agent sessions, their `processing` status says Claude
        is at work (and offers Stop), so the 👀 reaction is left out; its stream asks `stop` before each append."""
        if not place.thread_ts:
            return ChannelReply(self, place)
        return ThreadReply(self, place, thinking=not (self.sessions and self.sessions.works_in(place.team_id)),
                           stop=stop)

    def post_fork_root(self, fork: Fork) -> str:
        response = self.call(fork.team_id, "chat_postMessage", channel=fork.channel_id,
                             text=render.fork_root_text(fork), blocks=render.fork_root_blocks(fork))
        return response["ts"]

    def thread_messages(self, channel: Channel, thread_ts: str, before: str | None = None) -> list[ThreadMessage]:
        """conversations.replies up to `before`, every page (each retried as any call, a rate-limited one after
        Retry-After): only an adoption reads a thread. A later page Slack will not give ends the reading there."""
        with self.failures_explained("conversations_replies"):
            first = self.client_for(channel.team_id).conversations_replies(
                channel=channel.id, ts=thread_ts, limit=threads.PAGE_SIZE, latest=before)
        return threads.thread_messages(threads.while_given(first))  # iterating a SlackResponse follows its cursor

    def refresh_fork_root(self, fork: Fork) -> None:
        """The root as the fork is now (merged, abandoned…); an adopted thread's root, or a private fork's,
        is a message people posted, never the bot's to change."""
        if fork.root_ts and not fork.root_is_theirs:
            self.call(fork.team_id, "chat_update", channel=fork.channel_id, ts=fork.root_ts,
                      text=render.fork_root_text(fork), blocks=render.fork_root_blocks(fork))

    def post_merge(self, fork: Fork, stats: ForkStats, summary: str) -> str:
        """In the channel; a fork of a fork's summary goes to its parent fork's thread; a private fork's to the
        channel it forked, saying whose it was (and nothing else of it)."""
        names = self.names.for_text(fork.team_id)
        if fork.private:
            text, blocks = render.private_merge(fork, summary, names)
        else:
            text, blocks = render.merge_header(fork, stats), render.merge_blocks(fork, stats, summary, names)
        response = self.call(fork.team_id, "chat_postMessage", channel=fork.home.id,
                             thread_ts=fork.parent_root_ts, text=text, blocks=blocks)
        return response["ts"]

    def post_private_intro(self, fork: Fork, channel_name: str | None) -> None:
        text, blocks = render.private_intro(fork, channel_name)
        self.call(fork.team_id, "chat_postMessage", channel=fork.channel_id, thread_ts=fork.root_ts, text=text,
                  blocks=blocks)

    def note_in_thread(self, fork: Fork, text: str) -> None:
        if fork.summary_ts:
            text += f" <{render.permalink(fork.home.id, fork.summary_ts)}|See the summary>."
        self.call(fork.team_id, "chat_postMessage", channel=fork.channel_id, thread_ts=fork.root_ts, text=text)

    def post_draft(self, fork: Fork, draft: Draft, guidance: str) -> str:
        response = self.call(fork.team_id, "chat_postMessage", channel=fork.channel_id, thread_ts=fork.root_ts,
                             text=drafts.draft_text(fork, draft, guidance),
                             blocks=drafts.draft_blocks(fork, draft, guidance, self.names.for_text(fork.team_id)))
        return response["ts"]

    def close_draft(self, fork: Fork, draft: Draft, outcome: str) -> None:
        self.call(fork.team_id, "chat_update", channel=fork.channel_id, ts=draft.ts, text=f"Draft {draft.number}: {outcome}",
                  blocks=drafts.settled_blocks(fork, draft, outcome, self.names.for_text(fork.team_id)))

    def open_draft_editor(self, team_id: str, trigger_id: str, fork: Fork, draft: Draft) -> None:
        self.call(team_id, "views_open", trigger_id=trigger_id, view=drafts.editor_view(fork, draft, fork.channel_id))

    def ask_redraft_guidance(self, team_id: str, trigger_id: str, fork: Fork, draft: Draft) -> None:
        self.call(team_id, "views_open", trigger_id=trigger_id, view=drafts.guidance_view(fork, draft, fork.channel_id))

    def post_notice(self, place: Place, text: str) -> None:
        self.call(place.team_id, "chat_postMessage", channel=place.channel_id, thread_ts=place.thread_ts, text=text)

    def remind(self, fork: Fork, expiry_policy: str, expiry_seconds: float) -> None:
        text, blocks = render.reminder(fork, expiry_policy, expiry_seconds)
        self.call(fork.team_id, "chat_postMessage", channel=fork.channel_id, thread_ts=fork.root_ts, text=text,
                  blocks=blocks)

    def budget_reached(self, fork: Fork, burned: int, limit: int) -> None:
        text, blocks = render.budget_notice(fork, burned, limit)
        self.call(fork.team_id, "chat_postMessage", channel=fork.channel_id, thread_ts=fork.root_ts, text=text,
                  blocks=blocks)

    def show_context(self, audience: Audience, report: ContextReport) -> None:
        self.tell(audience, views.context_text(report))

    def show_forks(self, audience: Audience, listings: list[ForkListing], counts: dict[ForkStatus, int]) -> None:
        self.tell(audience, views.forks_text(listings, counts))

    def refuse_merge(self, audience: Audience, reason: str, open_forks: list[Fork]) -> None:
        self.tell(audience, f"{reason}\n{views.open_forks_text(open_forks)}")

    def publish_home(self, team_id: str, user_id: str, listings: list[ForkListing],
                     economy: list[ChannelEconomy], spend: dict[str, Spent] | None = None,
                     memory: dict[str, int] | None = None) -> None:
        self.call(team_id, "views_publish", user_id=user_id, view=views.home_view(listings, economy, spend, memory))

    def refuse_with_children(self, audience: Audience, reason: str, children: list[Fork]) -> None:
        text, blocks = render.children_refusal(reason, children)
        self.tell(audience, text, blocks)

    def tell(self, audience: Audience, text: str, blocks: list[dict] | None = None) -> None:
        if audience.response_url:
            self._respond(audience.response_url, text=text, blocks=blocks, response_type="ephemeral",
                          replace_original=False)
            return
        self.call(audience.team_id, "chat_postEphemeral", channel=audience.channel_id, user=audience.user_id, text=text,
                  blocks=blocks, thread_ts=audience.thread_ts)

    def is_admin(self, team_id: str, user_id: str) -> bool:
        """From the person's users.info answer of this hour (Names, above): one call per person an hour, names
        and roles together; raises ChatUnavailable, explained, when Slack would not say."""
        with self.failures_explained("users_info"):
            return self.names.admin(team_id, user_id)

    def open_settings(self, team_id: str, trigger_id: str, channel_id: str, effective: ChannelSettings,
                      defaults: ChannelSettings, choices: Choices, with_token: frozenset[str] = frozenset()) -> None:
        self.call(team_id, "views_open", trigger_id=trigger_id,
                  view=settings_view.settings_view(channel_id, effective, defaults, choices, with_token))

    def ask_to_forget(self, audience: Audience, answer: str) -> None:
        text, blocks = settings_view.forget_question(answer)
        self.tell(audience, text, blocks)

    def settle_question(self, audience: Audience, text: str) -> None:
        if audience.response_url:
            self._respond(audience.response_url, text=text, replace_original=True)
        else:
            self.tell(audience, text)

    def post_remembered(self, place: Place, text: str, entry_id: int, ask: bool) -> str:
        response = self.call(place.team_id, "chat_postMessage", channel=place.channel_id, thread_ts=place.thread_ts,
                             text=text, blocks=memory_view.note_blocks(text, entry_id, ask))
        return response["ts"]

    def settle_remembered(self, channel: Channel, ts: str, text: str) -> None:
        self.call(channel.team_id, "chat_update", channel=channel.id, ts=ts, text=text,
                  blocks=[render.section(text[:2_900])])

    def open_memory(self, team_id: str, trigger_id: str, channel: Channel, entries: list[MemoryEntry],
                    budget: int) -> None:
        self.call(team_id, "views_open", trigger_id=trigger_id, view=memory_view.memory_view(channel, entries, budget))

    def refresh_memory(self, team_id: str, view_id: str, channel: Channel, entries: list[MemoryEntry],
                       budget: int) -> None:
        self.call(team_id, "views_update", view_id=view_id, view=memory_view.memory_view(channel, entries, budget))

    def open_memory_editor(self, team_id: str, trigger_id: str, entry: MemoryEntry) -> None:
        self.call(team_id, "views_push", trigger_id=trigger_id, view=memory_view.editor_view(entry))

    def _respond(self, response_url: str, **body) -> None:
        pool = self.clients.pool
        webhook = PooledWebhookClient(response_url, retry_handlers=retry_handlers(), pool=pool,
                                      ssl=pool.connection_pool_kw.get("ssl_context"))
        try:
            response = webhook.send(**body)
        except FAILURES as error:
            log.warning("response_url unreachable: %s", type(error).__name__)
            raise ChatUnavailable(UNREACHABLE) from None
        if response.status_code >= 300:
            log.warning("response_url answered %s", response.status_code)

    def call(self, team_id: str, method: str, **arguments):
        arguments = {k: v for k, v in arguments.items() if v is not None}
        with self.failures_explained(method):
            return getattr(self.client_for(team_id), method)(**arguments)

    @contextmanager
    def failures_explained(self, method: str) -> Iterator[None]:
        """Slack's refusals and failures inside the block: logged, raised as ChatUnavailable."""
        try:
            yield
        except SlackApiError as error:
            code = failure_code(error)
            log.warning("Slack %s failed: %s", method.replace("_", "."), code)
            if error.response.status_code >= 500:
                raise ChatUnavailable(UNWELL) from None
            raise ChatUnavailable(_EXPLAINED.get(code, f"Slack refused the request ({code}).")) from None
        except FAILURES as error:
            log.warning("Slack %s failed: %s", method.replace("_", "."), failure_code(error))
            raise ChatUnavailable(UNREACHABLE) from None
