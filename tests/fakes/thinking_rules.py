"""Models, thinking and the settings each model refuses, as the fake Anthropic checks and scripts them.

Sources (each rule's line in tests/fakes/README.md names its page):
- platform.claude.com/docs/en/models/sonnet-5-5/migration-guide: on Claude Sonnet 5.5 a request without
  `thinking` runs adaptive thinking (as `thinking: {"type": "adaptive"}`), its default `display` is
  "omitted"; thinking budgets (`thinking.type: "enabled"`), `thinking: {"type": "disabled"}`, non-default
  sampling parameters, assistant prefill and forced tool choice return 400; the models overview and each
  model's page say which others think by default and take `output_config.effort`;
- platform.claude.com/docs/en/build-with-claude/extended-thinking ("Preserving thinking blocks", streaming):
  a thinking block streams as `content_block_start` {thinking "", signature ""}, `thinking_delta` events, then
  one `signature_delta` just before its `content_block_stop`; with display "omitted" its text is empty while
  its signature still carries the thinking; during a turn's continuation (tool use, `pause_turn`) the last
  assistant message must hold the answer's thinking and redacted_thinking blocks unchanged — the API checks
  signatures and refuses modified blocks;
- platform.claude.com/docs/en/api/models/retrieve: an unknown model id is 404 `not_found_error`, on the
  Models API and on the Messages API alike.
Where a page quotes no error message the fake's message is its own, in the API's style.
"""
from __future__ import annotations

import base64
import hashlib
import hmac
import itertools
import os
import threading
from dataclasses import dataclass

from .media_rules import Problem

EFFORTS = ("low", "medium", "high", "xhigh", "max")
THINKING_BLOCKS = ("thinking", "redacted_thinking")
ALL_REFUSED = frozenset({"budget", "disabled", "sampling", "prefill", "forced_tool_choice"})
SAMPLING_DEFAULTS = {"temperature": 1.0, "top_p": None, "top_k": None}


@dataclass(frozen=True)
class ModelFacts:
    display_name: str
    thinks: bool  # a request without `thinking` runs adaptive thinking
    display: str = "summarized"  # what a thinking block shows unless the request says
    refuses: frozenset[str] = frozenset()  # settings answered 400 (ALL_REFUSED names them)
    effort: bool = True  # takes output_config.effort
    system_messages: bool = False  # takes mid-conversation {"role": "system"} messages (system_message_rules.py)


_ADAPTIVE = frozenset({"budget", "sampling"})  # Sonnet 5 / Opus 4.7+: budgets and sampling refused
MODELS: dict[str, ModelFacts] = {
    "claude-fable-5-1": ModelFacts("Claude Fable 5.1", True, "omitted", ALL_REFUSED),
    "claude-fable-5": ModelFacts("Claude Fable 5", True, "omitted", ALL_REFUSED),
    "claude-opus-5-5": ModelFacts("Claude Opus 5.5", True, "omitted", ALL_REFUSED),
    "claude-opus-5": ModelFacts("Claude Opus 5", True, "omitted", _ADAPTIVE),
    "claude-opus-4-8": ModelFacts("Claude Opus 4.8", False, "omitted", _ADAPTIVE, system_messages=True),
    "claude-opus-4-7": ModelFacts("Claude Opus 4.7", False, "omitted", _ADAPTIVE),
    "claude-opus-4-6": ModelFacts("Claude Opus 4.6", False),
    "claude-opus-4-5": ModelFacts("Claude Opus 4.5", False),
    "claude-sonnet-5-5": ModelFacts("Claude Sonnet 5.5", True, "omitted", ALL_REFUSED),
    "claude-sonnet-5": ModelFacts("Claude Sonnet 5", True, "omitted", _ADAPTIVE),
    "claude-sonnet-4-6": ModelFacts("Claude Sonnet 4.6", False),
    "claude-sonnet-4-5": ModelFacts("Claude Sonnet 4.5", False, effort=False),
    "claude-haiku-5-5": ModelFacts("Claude Haiku 5.5", False),
    "claude-haiku-4-5": ModelFacts("Claude Haiku 4.5", False, effort=False),
    "claude-haiku-4-5-20251001": ModelFacts("Claude Haiku 4.5", False, effort=False),
    # not Anthropic's: models the suite names for "a model the price table does not know" (one released after
    # the table was written); the fake knows them so that such a model can be used end to end
    "claude-unpriced-test": ModelFacts("Unpriced test model", False),
    "claude-test": ModelFacts("Test model", False),
    "claude-test-model-from-env": ModelFacts("Test model", False),
}


def not_found(model) -> Problem:
    return Problem(f"model: {model}", 404, "not_found_error")


class Thinking:
    """The signatures this fake gave its thinking blocks, and the answers that paused (whose continuation
    must hand their thinking back unchanged)."""

    def __init__(self):
        self._key = os.urandom(16)
        self._count = itertools.count(1)
        self._signed: dict[str, str] = {}  # signature → the thinking it signs (as shown)
        self._redacted: set[str] = set()
        self._paused: list[list[dict]] = []  # each paused answer's whole content so far
        self._lock = threading.Lock()

    def blocks(self, request: dict, thought: str | None, redacted: bool) -> list[dict]:
        """The thinking an answer starts with: none unless the model thinks for this request."""
        facts = MODELS.get(request.get("model"))
        setting = request.get("thinking")
        kind = setting.get("type") if isinstance(setting, dict) else None
        if facts is None or thought is None or not (kind in ("adaptive", "enabled") or (kind is None and facts.thinks)):
            return []
        display = setting.get("display", facts.display) if isinstance(setting, dict) else facts.display
        shown = thought if display == "summarized" else ""
        with self._lock:
            signature = base64.b64encode(hmac.new(self._key, f"{next(self._count)}:{shown}".encode(),
                                                  hashlib.sha256).digest() * 2).decode()
            self._signed[signature] = shown
            found = [{"type": "thinking", "thinking": shown, "signature": signature}]
            if redacted:
                data = base64.b64encode(os.urandom(48)).decode()
                self._redacted.add(data)
                found.append({"type": "redacted_thinking", "data": data})
        return found

    def paused(self, request: dict, content: list[dict]) -> None:
        """An answer stopped with pause_turn: its continuation must carry all of this back."""
        last = request["messages"][-1]
        before = last["content"] if last["role"] == "assistant" and isinstance(last["content"], list) else []
        with self._lock:
            self._paused.append([*before, *content])

    def problem(self, request: dict) -> Problem | None:
        facts = MODELS.get(request.get("model"))
        if facts is None:
            return not_found(request.get("model"))
        found = _settings(request, facts) or self._blocks(request) or self._continuation(request, facts)
        return Problem(found) if found else None

    def _blocks(self, request: dict) -> str | None:
        for i, message in enumerate(request["messages"]):
            content = message["content"]
            for j, block in enumerate(content if isinstance(content, list) else []):
                path = f"messages.{i}.content.{j}"
                if block.get("type") == "thinking":
                    for key in ("thinking", "signature"):
                        if not isinstance(block.get(key), str):
                            return f"{path}.{key}: Field required"
                    extra = next((k for k in block if k not in ("type", "thinking", "signature")), None)
                    if extra:
                        return f"{path}.{extra}: Extra inputs are not permitted"
                    with self._lock:
                        valid = self._signed.get(block["signature"]) == block["thinking"]
                    if not valid:
                        return f"{path}: Invalid `signature` in `thinking` block"
                elif block.get("type") == "redacted_thinking":
                    with self._lock:
                        valid = block.get("data") in self._redacted
                    if not valid:
                        return f"{path}: Invalid `data` in `redacted_thinking` block"
        return None

    def _continuation(self, request: dict, facts: ModelFacts) -> str | None:
        messages = request["messages"]
        last = messages[-1]
        if last["role"] != "assistant":
            return None
        content = last["content"] if isinstance(last["content"], list) else [{"type": "text", "text": last["content"]}]
        with self._lock:
            paused = next((p for p in reversed(self._paused) if _identity(p) == _identity(content)), None)
        if paused is None:
            return "Prefilling assistant messages is not supported for this model." \
                if "prefill" in facts.refuses else None
        if [b for b in content if b.get("type") in THINKING_BLOCKS] != [b for b in paused
                                                                          if b["type"] in THINKING_BLOCKS]:
            return (f"messages.{len(messages) - 1}.content: `thinking` or `redacted_thinking` blocks in the latest "
                    "assistant message cannot be modified. These blocks must remain as they were in the original "
                    "response.")
        return None


def _identity(content: list[dict]) -> list[tuple]:
    """What names an answer's blocks other than its thinking (the client may drop empty text and trim the last)."""
    return [(b.get("type"), b.get("id") or b.get("tool_use_id") or str(b.get("text", "")).rstrip())
            for b in content if isinstance(b, dict) and b.get("type") not in THINKING_BLOCKS
            and not (b.get("type") == "text" and not str(b.get("text", "")).strip())]


def _settings(request: dict, facts: ModelFacts) -> str | None:
    setting = request.get("thinking")
    kind = setting.get("type") if isinstance(setting, dict) else None
    if kind == "enabled" and "budget" in facts.refuses:
        return ('"thinking.type.enabled" is not supported for this model. Use "thinking.type.adaptive" and '
                '"output_config.effort" to control thinking behavior.')
    if kind == "disabled" and "disabled" in facts.refuses:
        return ('"thinking.type.disabled" is not supported for this model. Use "thinking.type.between_tools" '
                'to turn off upfront thinking.')
    if "sampling" in facts.refuses:
        for name, default in SAMPLING_DEFAULTS.items():
            if name in request and request[name] != default:
                return f"{name}: only the default value is supported for this model"
    choice = request.get("tool_choice")
    if "forced_tool_choice" in facts.refuses and isinstance(choice, dict) and choice.get("type") in ("any", "tool"):
        return f"tool_choice.type: '{choice['type']}' is not supported for this model; use 'auto' or 'none'"
    config = request.get("output_config")
    effort = config.get("effort") if isinstance(config, dict) else None
    if effort is not None:
        if effort not in EFFORTS:
            return "output_config.effort: Input should be " + ", ".join(f"'{e}'" for e in EFFORTS[:-1]) + " or 'max'"
        if not facts.effort:
            return "output_config.effort: This model does not support the effort parameter."
    return None
