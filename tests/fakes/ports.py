"""A fake of the Model port, for use-case tests without I/O: it records what the use cases asked for, in
order, and answers like the real adapter would (a completion per model call, scripted failures). Slack's
ports are recorded by bot/eval/recording.py's RecordingChat, which the eval uses too."""
from __future__ import annotations

from collections import deque
from dataclasses import dataclass, field

from bot.domain.context import ModelInput
from bot.domain.errors import ModelUnavailable
from bot.domain.model import Usage
from bot.domain.spend import ceiling
from bot.services.ports import Completion, Source


@dataclass
class Answer:
    text: str = ""
    usage: Usage = Usage(100, 20)
    error: str | None = None  # raise ModelUnavailable with this message instead
    sources: tuple[Source, ...] = ()


@dataclass
class ScriptedModel:
    """Answers scripted `Answer`s in order, then "Answer N"; records every model input."""

    inputs: list[ModelInput] = field(default_factory=list)
    script: deque = field(default_factory=deque)
    uploads: list[tuple[str, str, bytes]] = field(default_factory=list)
    forgotten: list[str] = field(default_factory=list)  # file ids deleted from the provider

    def answer(self, *answers: Answer) -> None:
        self.script.extend(answers)

    def complete(self, model_input: ModelInput, events=None, stop=None) -> Completion:
        self.inputs.append(model_input)
        answer = self.script.popleft() if self.script else Answer(f"Answer {len(self.inputs)}")
        if answer.error:
            raise ModelUnavailable(answer.error)
        if events and answer.text:
            events.write(answer.text)
        return Completion(answer.text, answer.usage, answer.sources)

    def ceiling(self, model_input: ModelInput) -> tuple[str, Usage]:
        return model_input.model or "claude-sonnet-5-5", ceiling(model_input, 8192)

    def upload(self, name: str, media_type: str, data: bytes) -> str:
        self.uploads.append((name, media_type, data))
        return f"file_{len(self.uploads):04d}"

    def forget_upload(self, file_id: str) -> None:
        self.forgotten.append(file_id)

    def texts(self, index: int = -1) -> list[str]:
        """The text blocks of one model input, in order."""
        return [b.text for b in self.inputs[index].blocks]
