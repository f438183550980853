"""What Anthropic's Messages API refuses, with its own messages: HTTP 400 `invalid_request_error`
unless said otherwise.

The messages are the API's, as its 400 answers quote them (request validation first, with paths
such as `messages.0.content.1.text`, then the conversation rules):
- `max_tokens: Field required`, `messages: Field required`, `model: Field required`;
- a block of unknown `type`, a text block without `text` or with a non-string one, an unknown key;
- `messages: at least one message is required`;
- `messages: first message must use the "user" role`;
- `messages.N: all messages must have non-empty content except for the optional final assistant message`;
- `messages: text content blocks must be non-empty` / `… must contain non-whitespace text`
  (the same for `system`);
- `messages: final assistant content cannot end with trailing whitespace`;
- `messages.N: `tool_use` ids were found without `tool_result` blocks immediately after: …` and
  `messages.N.content.M: unexpected `tool_use_id` found in `tool_result` blocks: …` (a client tool's calls
  are answered in the very next user message: platform.claude.com "How to implement tool use");
- `A maximum of 4 blocks with cache_control may be provided. Found N.` (system and messages together);
- `<path>.cache_control.ttl: Input should be '5m' or '1h'`;
- `<path>.cache_control.ttl: a ttl='1h' cache_control block must not come after a ttl='5m' cache_control
  block. Note that blocks are processed in the following order: `tools`, `system`, `messages`.` — a
  breakpoint without a `ttl` is a 5-minute one (platform.claude.com "Prompt caching", "Mixing different
  TTLs"; the message as the API sends it, quoted in anthropics/claude-code#37842).

Mid-conversation `{"role": "system"}` messages (system_message_rules.py), images and documents
(media_rules.py), `tools` (tool_rules.py) and the MCP connector's `mcp_servers` (mcp_rules.py, with the
request's beta names) are checked as the API checks them; `problem()` gives the whole answer (status, type, message, details) for the fake to send.
"""
from __future__ import annotations

from .mcp_rules import BETAS, listing_problem, mcp_problem
from .media_rules import Problem, media_problem
from .system_message_rules import system_message_problem
from .tool_rules import tools_problem

MAX_BREAKPOINTS = 4
BLOCK_TYPES = ("text", "image", "document", "search_result", "thinking", "redacted_thinking", "tool_use",
               "tool_result", "server_tool_use", "web_search_tool_result", "web_fetch_tool_result")
MCP_BLOCK_TYPES = ("mcp_tool_use", "mcp_tool_result", "mcp_tool_listing")  # with the MCP connector's beta only
TEXT_KEYS = {"type", "text", "cache_control", "citations"}
TTLS = ("5m", "1h")
TTL_ORDER = ("a ttl='1h' cache_control block must not come after a ttl='5m' cache_control block. Note that "
             "blocks are processed in the following order: `tools`, `system`, `messages`.")


def refusal(request: dict, files=None, betas: set[str] = frozenset()) -> str | None:
    """The API's error message for `request`, or None when the API would accept it."""
    found = problem(request, files, betas)
    return found.message if found else None


def problem(request: dict, files=None, betas: set[str] = frozenset()) -> Problem | None:
    """The API's whole refusal of `request`, or None. `files`: file_id → (mime_type, bytes) of the
    files the Files API holds, for `file` sources; `betas`: the request's anthropic-beta names."""
    for rule in (_fields, system_message_problem, lambda r: _blocks(r, bool(betas & BETAS)), lambda r: mcp_problem(r, betas), tools_problem, lambda r: media_problem(r, files), _conversation, _breakpoints):
        found = rule(request)
        if found:
            return found if isinstance(found, Problem) else Problem(found)
    return None


def _fields(request: dict) -> str | None:
    for name in ("model", "max_tokens", "messages"):
        if name not in request:
            return f"{name}: Field required"
    if not isinstance(request["max_tokens"], int) or isinstance(request["max_tokens"], bool):
        return "max_tokens: Input should be a valid integer"
    if request["max_tokens"] < 1:
        return "max_tokens: Input should be greater than or equal to 1"
    if not isinstance(request["messages"], list):
        return "messages: Input should be a valid list"
    for i, message in enumerate(request["messages"]):
        if not isinstance(message, dict):
            return f"messages.{i}: Input should be a valid dictionary"
        if message.get("role") not in ("user", "assistant", "system"):  # system: system_message_rules.py
            return f"messages.{i}.role: Input should be 'user' or 'assistant'"
        if "content" not in message:
            return f"messages.{i}.content: Field required"
    return None


def _blocks(request: dict, mcp: bool = False) -> str | None:
    system = request.get("system")
    if system is not None and not isinstance(system, str):
        if not isinstance(system, list):
            return "system: Input should be a valid string or a valid list"
        for j, block in enumerate(system):
            problem = _text_block(block, f"system.{j}", text_only=True)
            if problem:
                return problem
    for i, message in enumerate(request["messages"]):
        content = message["content"]
        if isinstance(content, str):
            continue
        if not isinstance(content, list):
            return f"messages.{i}.content: Input should be a valid string or a valid list"
        for j, block in enumerate(content):
            problem = _text_block(block, f"messages.{i}.content.{j}", mcp=mcp)
            if problem:
                return problem
    return None


def _text_block(block, path: str, text_only: bool = False, mcp: bool = False) -> str | None:
    if not isinstance(block, dict):
        return f"{path}: Input should be a valid dictionary or object to extract fields from"
    kind = block.get("type")
    allowed = ("text",) if text_only else BLOCK_TYPES + (MCP_BLOCK_TYPES if mcp else ())
    if kind not in allowed:
        expected = ", ".join(f"'{t}'" for t in allowed)
        return f"{path}: Input tag '{kind}' found using 'type' does not match any of the expected tags: {expected}"
    if kind == "mcp_tool_listing":
        return listing_problem(block, path)
    if kind != "text":
        return None
    if "text" not in block:
        return f"{path}.text: Field required"
    if not isinstance(block["text"], str):
        return f"{path}.text: Input should be a valid string"
    for key in block:
        if key not in TEXT_KEYS:
            return f"{path}.{key}: Extra inputs are not permitted"
    return _cache_control(block, path)


def _cache_control(block: dict, path: str) -> str | None:
    control = block.get("cache_control")
    if control is None:
        return None
    if not isinstance(control, dict) or control.get("type") != "ephemeral":
        return f"{path}.cache_control.type: Input should be 'ephemeral'"
    extra = next((key for key in control if key not in ("type", "ttl")), None)
    if extra:
        return f"{path}.cache_control.{extra}: Extra inputs are not permitted"
    if control.get("ttl", "5m") not in TTLS:
        return f"{path}.cache_control.ttl: Input should be '5m' or '1h'"
    return None


def _conversation(request: dict) -> str | None:
    messages = request["messages"]
    if not messages:
        return "messages: at least one message is required"
    if messages[0]["role"] != "user":
        return 'messages: first message must use the "user" role'
    system = request.get("system")
    for block in system if isinstance(system, list) else []:
        if not block["text"]:
            return "system: text content blocks must be non-empty"
        if not block["text"].strip():
            return "system: text content blocks must contain non-whitespace text"
    found = _tool_results(messages)
    if found:
        return found
    for i, message in enumerate(messages):
        final_assistant = i == len(messages) - 1 and message["role"] == "assistant"
        content = message["content"]
        if not content and not final_assistant:
            return (f"messages.{i}: all messages must have non-empty content except for the optional final "
                    "assistant message")
        if isinstance(content, str) and content and not content.strip():
            return "messages: text content blocks must contain non-whitespace text"
        for block in [] if isinstance(content, str) else content:
            if block.get("type") == "text" and not block["text"]:
                return "messages: text content blocks must be non-empty"
            if block.get("type") == "text" and not block["text"].strip():
                return "messages: text content blocks must contain non-whitespace text"
        if final_assistant and _last_text(content) != _last_text(content).rstrip():
            return "messages: final assistant content cannot end with trailing whitespace"
    return None


def _tool_results(messages: list) -> str | None:
    """Each `tool_use` answered by a `tool_result` in the very next (user) message, and each `tool_result` answering
    a `tool_use` of the message before it (platform.claude.com "How to implement tool use": results go in the
    next user message; the wording is the API's 400)."""
    for i, message in enumerate(messages):
        content = message["content"] if isinstance(message["content"], list) else []
        used = [b.get("id") for b in content if isinstance(b, dict) and b.get("type") == "tool_use"]
        after = messages[i + 1]["content"] if i + 1 < len(messages) else None
        answered = {b.get("tool_use_id") for b in after if isinstance(b, dict) and b.get("type") == "tool_result"} \
            if isinstance(after, list) else set()
        missing = [u for u in used if u not in answered]
        if missing and (i + 1 < len(messages) or message["role"] != "assistant"):
            return (f"messages.{i + 1}: `tool_use` ids were found without `tool_result` blocks immediately after: "
                    f"{', '.join(missing)}. Each `tool_use` block must have a corresponding `tool_result` block in the "
                    "next message.")
        before = messages[i - 1]["content"] if i > 0 and isinstance(messages[i - 1]["content"], list) else []
        asked = {b.get("id") for b in before if isinstance(b, dict) and b.get("type") == "tool_use"}
        for j, block in enumerate(content):
            if isinstance(block, dict) and block.get("type") == "tool_result" and block.get("tool_use_id") not in asked:
                return (f"messages.{i}.content.{j}: unexpected `tool_use_id` found in `tool_result` blocks: "
                        f"{block.get('tool_use_id')}. Each `tool_result` block must have a corresponding `tool_use` "
                        "block in the previous message.")
    return None


def _last_text(content) -> str:
    if isinstance(content, str):
        return content
    texts = [b["text"] for b in content if b.get("type") == "text"]
    return texts[-1] if texts else ""


def _breakpoints(request: dict) -> str | None:
    count = breakpoints(request)
    if count > MAX_BREAKPOINTS:
        return f"A maximum of {MAX_BREAKPOINTS} blocks with cache_control may be provided. Found {count}."
    marked = [(path, block) for path, block in paths(request) if "cache_control" in block]
    for path, block in marked:
        problem = _cache_control(block, path)
        if problem:
            return problem
    seen_five = False
    for path, block in marked:
        ttl = block["cache_control"].get("ttl", "5m")
        if ttl == "1h" and seen_five:
            return f"{path}.cache_control.ttl: {TTL_ORDER}"
        seen_five = seen_five or ttl == "5m"
    return None


def paths(request: dict) -> list[tuple[str, dict]]:
    """Every block that may carry `cache_control`, in the order the API processes them (tools, system,
    messages), with its path as the API's errors name it."""
    found = [(f"tools.{i}", t) for i, t in enumerate(request.get("tools") or []) if isinstance(t, dict)]
    if isinstance(request.get("system"), list):
        found += [(f"system.{i}", b) for i, b in enumerate(request["system"]) if isinstance(b, dict)]
    for i, message in enumerate(request.get("messages") or []):
        if isinstance(message, dict) and isinstance(message.get("content"), list):
            found += [(f"messages.{i}.content.{j}", b) for j, b in enumerate(message["content"]) if isinstance(b, dict)]
    return found


def breakpoints(request: dict) -> int:
    """`cache_control` markers in a request: tools, system and message blocks together."""
    return sum(1 for _, block in paths(request) if "cache_control" in block)
