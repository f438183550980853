"""Claude, as the use cases see it, and the events of an answer being written (a Replies port's writer)."""
from __future__ import annotations

from collections.abc import Callable
from typing import Protocol

from ...domain.context import ModelInput
from ...domain.model import Usage
from .values import Completion, Source

class ReplyEvents(Protocol):
    """What a model call reports while it works."""

    def write(self, delta: str) -> None: ...
    def thinking_started(self) -> None:
        """Claude began to think (a thinking block started): nothing of it is shown, it may take a while."""
    def tool_started(self, tool_id: str, name: str, detail: str) -> None:
        """Claude began a web search (`detail`: the query) or fetch (the URL), or called a connector's tool
        (`name`: "connector · tool")."""
    def tool_finished(self, tool_id: str, sources: list[Source], failed: bool, output: str = "") -> None:
        """It ended (`output`: a one-line result, for a connector's call)."""
    def ended(self) -> None:
        """The answer's words are all written (its stop reason came); `finish` follows, perhaps with a tail."""


class ReplyWriter(ReplyEvents, Protocol):
    def finish(self, tail: str = "", carry_on: str | None = None) -> list[str]:
        """The answer is complete: show it all, `tail` (its sources, a note) last, with the call that ends it;
        the ts of the messages that hold it. `carry_on`: the answer was cut — a Continue button under it, whose
        value this is."""
    def fail(self, notice: str) -> None: ...


class StopSignal(Protocol):
    """Stop, pressed on the answer a model call is writing: the call then closes its stream at once (no more
    tokens are generated or billed) and returns what was written so far, `stopped`."""

    def requested(self) -> bool: ...
    def on_stop(self, close: Callable[[], None] | None) -> None:
        """Call `close` (from any thread) when Stop comes — at once if it came already; None: no more."""
    def clear_to_show(self) -> bool:
        """Before more of the answer streams: True when no Stop was pressed by now, wherever it was pressed
        (it may wait a moment for this process to have looked)."""


class Model(Protocol):
    def complete(self, model_input: ModelInput, events: ReplyEvents | None = None,
                 stop: StopSignal | None = None) -> Completion: ...
    def ceiling(self, model_input: ModelInput) -> tuple[str, Usage]:
        """The model that answers this input and the most one call with it may use: its input as counted plus
        max_tokens of output (bot/domain/spend.py: ceiling), what a turn reserves against its channel's cap."""
    def upload(self, name: str, media_type: str, data: bytes) -> str:
        """Keep a file with the model's provider (Anthropic's Files API); its id for requests."""
    def forget_upload(self, file_id: str) -> None:
        """Delete a file kept with the provider (one already gone counts as deleted); raises
        ModelUnavailable when the provider can't be reached."""


class Secrets(Protocol):
    """Connectors' tokens sealed at rest (bot/secrets: Fernet with THREADFORK_SECRET_KEY)."""

    def seal(self, token: str) -> str:
        """The token sealed; raises NoSecretKey (its message says what to set) without a key."""
    def open(self, sealed: str) -> str | None:
        """The token again; None when it can't be opened (no key, another key)."""


class Later(Protocol):
    """Calls made after a delay, on a timer the composition root owns (no thread of the use case's own)."""

    def after(self, seconds: float, call: Callable[[], None]) -> Callable[[], None]:
        """Run `call` once `seconds` from now; returns a cancel that keeps it from starting, or waits until it
        has finished when it started already."""
