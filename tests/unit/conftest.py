import itertools
import threading

import pytest

from bot.domain.model import Channel, ForkStatus
from bot.services.commands import SlashCommand
from bot.app import wire_services
from bot.infrastructure.scheduler import Delays, new_scheduler
from bot.eval.recording import RecordingChat
from bot.services.policy import Policy
from bot.services.ports import Chat
from bot.services.incoming import IncomingMessage

from ..fakes.clock import FakeClock
from ..fakes.memory import memory_store
from ..fakes.ports import ScriptedModel

BOT = "UBOT0001"
CHANNEL = "C0GENERAL01"


_delays: list[Delays] = []


def delays() -> Delays:
    """The Later port on one scheduler for the whole test process, as bot/app.py gives it the process's."""
    if not _delays:
        _delays.append(Delays(new_scheduler()))
    return _delays[0]


class UseCases:
    """The use cases on the in-memory store, with Slack and Model recorded at the ports: what a person does
    becomes one service call, as a listener would make it."""

    def __init__(self, **policy):
        self.clock = FakeClock()
        self.store = memory_store(self.clock)
        self._ts = itertools.count(1)
        self._ts_lock = threading.Lock()
        self.chat = RecordingChat(self.new_ts)  # one clock: a bot post's ts tells when it came
        self.model = ScriptedModel()
        self.services = wire_services(self.store, Chat.all_in(self.chat), self.model, BOT, Policy.knobs(**policy),
                                      later=delays())

    def new_ts(self) -> str:
        with self._ts_lock:
            n = next(self._ts)
        return f"{1_700_000_000 + n}.{n:06d}"

    def say(self, user: str, text: str, *, mention: bool = False, thread_ts: str | None = None,
            channel: str = CHANNEL, channel_type: str = "channel") -> str:
        ts = self.new_ts()
        text = f"<@{BOT}> {text}" if mention else text
        self.services.router.receive(IncomingMessage("T1", channel, channel_type, user, text, ts, thread_ts))
        return ts

    def slash(self, command: str, text: str = "", user: str = "UALICE01", channel: str = CHANNEL) -> None:
        call = {"/fork": self.services.commands.fork, "/merge": self.services.commands.merge,
                "/context": self.services.commands.context, "/forks": self.services.commands.forks_list}[command]
        call(SlashCommand("T1", channel, user, text, f"https://hooks.slack.test/{command}"))

    def react(self, user: str, ts: str, name: str = "white_check_mark", channel: str = CHANNEL) -> None:
        self.services.gestures.reaction(Channel("T1", channel), ts, user, name)

    def fork(self, number: int = 1, channel: str = CHANNEL):
        return self.store.sessions.fork_by_number(Channel("T1", channel), number)

    def open_fork(self, text: str = "", user: str = "UALICE01"):
        """`/fork text`; the newest fork of the channel."""
        self.slash("/fork", text, user=user)
        return max(self.all_forks(), key=lambda f: f.number)

    def all_forks(self, channel: str = CHANNEL):
        return [f for status in ForkStatus for f in self.store.sessions.forks_in(Channel("T1", channel), status)]

    def turns(self, session_id: int) -> list[tuple[str, str, str]]:
        return [(t.role.value, t.status.value, t.text) for t in self.store.turns.turns(session_id)]

    def parent(self, channel: str = CHANNEL) -> int:
        return self.store.sessions.parent_id(Channel("T1", channel))


@pytest.fixture
def cases():
    return UseCases()
