"""Mid-conversation system messages, as the Messages API checks them
(platform.claude.com/docs/en/build-with-claude/mid-conversation-system-messages):

- a `{"role": "system"}` message in `messages` is taken by the models marked so in thinking_rules.MODELS
  (Claude Opus 4.8 only; no beta header); any other model answers 400 "role 'system' is not supported on
  this model";
- it must immediately follow a user message (or an assistant message ending in server tool use), and be the
  last message or be followed by an assistant message;
- two in a row are refused: consecutive system messages are merged into one by the caller.

Each refusal is 400 `invalid_request_error`; only the unsupported-model wording is the API's (as the page
quotes it), the others are the fake's, in its style.
"""
from __future__ import annotations

from .thinking_rules import MODELS

UNSUPPORTED = "role 'system' is not supported on this model"
SERVER_TOOL_USES = ("server_tool_use", "mcp_tool_use")


def system_message_problem(request: dict) -> str | None:
    messages = request["messages"]
    facts = MODELS.get(request.get("model"))
    for i, message in enumerate(messages):
        if message.get("role") != "system":
            continue
        if facts is None:  # an unknown model is answered 404 (thinking_rules)
            return None
        if not facts.system_messages:
            return f"messages.{i}.role: {UNSUPPORTED}"
        before = messages[i - 1] if i else None
        after = messages[i + 1] if i + 1 < len(messages) else None
        if after is not None and after.get("role") == "system":
            return (f"messages.{i + 1}: consecutive system messages are not allowed; merge them into one system "
                    "message")
        if before is None or not (before.get("role") == "user" or _ends_in_server_tool_use(before)):
            return (f"messages.{i}: a system message must immediately follow a user message, or an assistant "
                    "message ending in server tool use")
        if after is not None and after.get("role") != "assistant":
            return f"messages.{i}: a system message must be the last message or be followed by an assistant message"
    return None


def _ends_in_server_tool_use(message: dict) -> bool:
    content = message.get("content")
    return message.get("role") == "assistant" and isinstance(content, list) and bool(content) \
        and isinstance(content[-1], dict) and content[-1].get("type") in SERVER_TOOL_USES
