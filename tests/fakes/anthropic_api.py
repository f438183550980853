"""A fake Anthropic Messages API: plain JSON and SSE streams, usage numbers, scripted replies and
errors (HTTP status errors before the stream, or an `error` event in the middle of it).

Streams are sent as the API sends them over HTTP/1.1: `Transfer-Encoding: chunked` on a kept-alive
connection, which carries the client's next request once the stream has ended; a stream cut short (an
error event, a client gone) closes its connection instead.

By default it answers "Answer N" (N counts requests) and, for a merge request, a summary that
quotes the fork's last user turn so tests can follow text end to end. A script may also use the
server tools the request offers (server_tools.py: `tools=[Search(…), Fetch(…)]`, `cited=[…]`);
without scripted tools an answer uses none, whatever the request offers. `mcp=[McpCall(…)]` scripts
the MCP connector's tool calls (mcp_rules.py), made before the web tools' and the answer's text; an answer
to a request that declares a connector starts with that server's `mcp_tool_listing` (mcp_rules.py).

`GET /v1/models/{id}` describes any model, with an `x-threadfork-fake` header: the recall eval
(bot/eval/endpoint.py) asks it before any turn and knows from that header that its accuracy means
nothing.

It is as strict as the real API (messages_rules.py): a request the API would refuse is answered
as the API answers it (400 `invalid_request_error` with the API's message, 404 for an unknown
file, 413 `request_too_large` over 32 MB), uses up no script, and is recorded in `rejections`,
which the test fixtures assert to be empty.

It serves the Files API too (anthropic_files.py), whose files `file` sources may name.

A client that closes a stream (Threadfork's Stop) is noticed as the API notices it: before each event the
connection is checked, and once the client is gone nothing more is generated or sent — `cancelled`
records, per request, how many text deltas had been sent and when the client left, so a test can prove
no token was generated after a stop.

Usage is reported as the API reports it, its prompt cache included (prompt_cache.py: entries keyed by
content up to each breakpoint, 5-minute and 1-hour lifetimes refreshed on a hit, the minimum cacheable
length, the 20-block lookback, `cache_creation` split by TTL); `claude.cache.clock.advance(minutes=…)`
makes time pass for it without waiting. A script's `usage` overrides what it reports. `usages` keeps what
each answered request was told, by request index.
"""
from __future__ import annotations

import itertools
import json
import select
import socket
import threading
import time
from collections import deque
from dataclasses import dataclass, field, replace

from .server_tools import Cited, Fetch, Search, check_citations, cited_blocks, streamed, tool_blocks  # noqa: F401
from .mcp_rules import McpCall, listing_blocks, mcp_blocks  # noqa: F401
from .tool_rules import server_tools

from .anthropic_files import TOO_LARGE, FilesStore
from .http import BackgroundServer, QuietHandler
from .messages_rules import problem
from .prompt_cache import PromptCache
from .thinking_rules import MODELS, Thinking, not_found

REQUEST_LIMIT = 32 * 1024 * 1024  # bytes of a Messages request (platform.claude.com, API overview)


@dataclass(frozen=True)
class Cancelled:
    deltas: int  # text deltas sent before the client closed the stream
    at: float  # monotonic time the fake noticed


class _ClientGone(Exception):
    pass


@dataclass
class Script:
    text: str | None = None
    usage: dict = field(default_factory=dict)  # input_tokens, output_tokens, cache_read_input_tokens…
    status: int | None = None  # HTTP error before any byte of the answer
    error_type: str = "api_error"
    error_message: str = "scripted failure"
    error_details: dict | None = None  # the error's `details` (e.g. {"error_code": …})
    error_after: int | None = None  # send this many text chunks, then an error event mid-stream
    chunk_delay: float = 0.0  # seconds between streamed chunks
    chunks: int = 4  # text deltas per text block
    tools: list = field(default_factory=list)  # Search / Fetch uses, in order, before the answer's text
    cited: list = field(default_factory=list)  # after `text`: plain strings and Cited(text, url) blocks
    mcp: list = field(default_factory=list)  # McpCall uses, before the web tools' and the text
    preface: str | None = None  # a text block before the tool uses ("I'll look that up.")
    stop_reason: str = "end_turn"  # e.g. "pause_turn" for a long tool-using turn the client resumes
    stop_delay: float = 0.0  # seconds between message_delta (the stop reason) and message_stop
    stop_details: dict | None = None  # e.g. a refusal's {"type": "refusal", "category": …, "explanation": …}
    # the thought a thinking model begins with (thinking_rules.py): shown only with display "summarized", its
    # signature always; None: no thinking block at all. thinking_tokens: what the thought adds to output_tokens
    thinking: str | None = "Working out what was asked."
    thinking_tokens: int = 0
    thinking_delay: float = 0.0  # seconds Claude thinks before the thinking block's signature comes
    redacted: bool = False  # a redacted_thinking block follows the thinking one
    # memory tool commands Claude sends (each a `tool_use` of `memory`, its input as the memory-tool page shows
    # it), after `preface`; the answer then stops with `tool_use` and goes on in the next scripted answer, once
    # the client sends each call's `tool_result`. A request that offers no memory tool gets `text` instead.
    memory: list = field(default_factory=list)

    def __post_init__(self):
        check_citations(self.tools, self.cited)


class FakeAnthropic:
    def __init__(self, tls: bool = False):
        """`tls`: serve HTTPS with the tests' certificate authority (tls.py)."""
        self.requests: list[dict] = []
        self.rejections: list[str] = []  # what the real API would have answered 400
        self.headers: list[dict] = []
        self.first_delta_at: list[float] = []  # monotonic time each stream sent its first text
        self.received_at: list[float] = []  # monotonic time each request arrived, by request index
        self.finished_at: dict[int, float] = {}  # request index → when its last event was sent
        self.cancelled: dict[int, Cancelled] = {}  # request index → the client closed its stream early
        self.default_script: Script | None = None  # answer every unscripted request with this
        self.tools_sent: list[list | None] = []  # each request's `tools`, None when it had no such key
        self.betas: list[set[str]] = []  # each request's anthropic-beta names
        self.files = FilesStore()
        self.cache = PromptCache()
        self.usages: dict[int, dict] = {}  # request index → the usage its answer reported
        self.answers: dict[int, list[dict]] = {}  # request index → the content blocks its answer sent
        self.request_limit = REQUEST_LIMIT
        self.thinking = Thinking()
        self._scripts: deque[Script] = deque()
        self._lock = threading.Lock()
        self.server = BackgroundServer(_Handler, tls=tls)
        self.server.httpd.fake = self

    @property
    def url(self) -> str:
        return self.server.url

    def reset(self) -> None:
        """Forget every request and script, as a fresh fake would (between property-test examples)."""
        with self._lock:
            for record in (self.requests, self.headers, self.first_delta_at, self.received_at, self._scripts,
                           self.tools_sent, self.betas):
                record.clear()
            self.files = FilesStore()
            self.thinking = Thinking()
            self.finished_at.clear()
            self.cancelled.clear()
            self.usages.clear()
            self.answers.clear()
            self.cache.clear()
            self.default_script = None

    def script(self, *scripts: Script) -> None:
        with self._lock:
            self._scripts.extend(scripts)

    def start(self) -> FakeAnthropic:
        self.server.start()
        return self

    def stop(self) -> None:
        self.server.stop()

    def next_script(self, request: dict, arrived: float, betas: set[str] = frozenset()) -> tuple[int, Script]:
        sources = self.files.sources()
        with self._lock:
            self.requests.append(request)
            self.received_at.append(arrived)
            self.tools_sent.append(request.get("tools") if "tools" in request else None)
            self.betas.append(set(betas))
            number = len(self.requests)
            refused = problem(request, sources, betas) or self.thinking.problem(request)
            if refused:
                self.rejections.append(f"request {number}: {refused.message}")
                return number - 1, Script(status=refused.status, error_type=refused.type,
                                          error_message=refused.message, error_details=refused.details)
            if self._scripts:
                return number - 1, self._scripts.popleft()
            if self.default_script:
                return number - 1, self.default_script
        if is_merge_request(request):
            return number - 1, Script(text=f"Summary of the fork. Last point discussed: {last_fork_turn(request)}")
        return number - 1, Script(text=f"Answer {number}")


def is_merge_request(request: dict) -> bool:
    return "[Merge request]" in last_user_text(request)


def last_user_text(request: dict) -> str:
    """The last text block of the last message not a system one ("" when it holds none, e.g. only an image)."""
    content = [m for m in request["messages"] if m.get("role") != "system"][-1]["content"]
    if isinstance(content, str):
        return content
    return next((b["text"] for b in reversed(content) if b.get("type") == "text"), "")


def last_fork_turn(request: dict) -> str:
    """The last user turn before the merge prompt, without its speaker line."""
    texts = [t for t in request_texts(request)[1:] if not t.startswith("[Merge request]")]
    return texts[-1].split("\n", 1)[-1] if texts else ""


def request_texts(request: dict) -> list[str]:
    """Every text block of a request, in order (system first); images and documents are not text."""
    texts = [b["text"] for b in request.get("system", [])] if isinstance(request.get("system"), list) else []
    for message in request["messages"]:
        content = message["content"]
        texts.extend([b["text"] for b in content if b.get("type") == "text"] if isinstance(content, list) else [content])
    return texts


def answer(request: dict, script: Script) -> tuple[list[dict], dict | None]:
    """The answer's content blocks, and its server tool usage (None when the request offers no server tool)."""
    if script.memory and offers_memory(request):
        preface = [{"type": "text", "text": script.preface}] if script.preface else []
        return preface + memory_uses(script.memory), None
    uses, counts = tool_blocks(request, script.tools)
    content = [{"type": "text", "text": script.preface}] if script.preface else []
    content += mcp_blocks(request, script.mcp) + uses
    if script.text or not script.cited:
        content.append({"type": "text", "text": script.text or ""})
    content += cited_blocks(script.cited, script.tools)
    return content, counts if server_tools(request) else None


def offers_memory(request: dict) -> bool:
    """Whether the request offers Claude's memory tool (`{"type": "memory_20250818", "name": "memory"}`)."""
    return any(isinstance(t, dict) and t.get("type") == "memory_20250818" for t in request.get("tools") or [])


def memory_uses(commands: list[dict]) -> list[dict]:
    """`tool_use` blocks of the memory tool, as platform.claude.com/docs/en/agents-and-tools/tool-use/memory-tool
    shows Claude sending them: {"type": "tool_use", "id": "toolu_…", "name": "memory", "input": {"command": …}}."""
    return [{"type": "tool_use", "id": f"toolu_mem{next(_TOOL_IDS):08d}", "name": "memory", "input": dict(command)}
            for command in commands]


_TOOL_IDS = itertools.count(1)


def _usage(cache: PromptCache, request: dict, script: Script, text: str, files=None) -> dict:
    usage = cache.use(request, files)
    usage = {**usage, "input_tokens": max(1, usage["input_tokens"]), "output_tokens": max(1, len(text) // 4)}
    usage.update(script.usage)
    if "cache_creation_input_tokens" in script.usage and "cache_creation" not in script.usage:
        usage["cache_creation"] = {"ephemeral_5m_input_tokens": script.usage["cache_creation_input_tokens"],
                                   "ephemeral_1h_input_tokens": 0}
    return usage


def _pieces(text: str, count: int) -> list[str]:
    size = max(1, -(-len(text) // max(1, count)))
    return [text[i:i + size] for i in range(0, len(text), size)] or [""]


def beta_names(headers) -> list[str]:
    """The anthropic-beta values of a request: comma-separated, the header possibly repeated."""
    return [name.strip() for value in headers.get_all("anthropic-beta") or [] for name in value.split(",")]


class _Handler(QuietHandler):
    def do_GET(self):
        if self.path.startswith("/v1/models/"):  # the start-up check and the eval's free check of key and model
            model = self.path.removeprefix("/v1/models/").split("?")[0]
            if model not in MODELS:
                missing = not_found(model)
                with self.server.fake._lock:
                    self.server.fake.rejections.append(f"GET {self.path}: {missing.message}")
                self.send(404, json.dumps({"type": "error", "error": {"type": missing.type, "message": missing.message}})
                          .encode(), headers={"x-threadfork-fake": "anthropic"})
                return
            info = {"type": "model", "id": model, "display_name": f"{MODELS[model].display_name} (fake)",
                    "created_at": "2026-01-01T00:00:00Z"}
            self.send(200, json.dumps(info).encode(), headers={"x-threadfork-fake": "anthropic"})
            return
        self._files("GET")

    def do_DELETE(self):
        self._files("DELETE")

    def _files(self, method: str) -> None:
        fake: FakeAnthropic = self.server.fake
        if not self.path.startswith("/v1/files"):
            self.send(404, b'{"type":"error","error":{"type":"not_found_error","message":"no route"}}')
            return
        body = self.body()
        refused = self._refused_betas()
        if refused:
            return
        status, answer = fake.files.handle(method, self.path, self.headers, body, set(beta_names(self.headers)))
        if status >= 400:
            with fake._lock:
                fake.rejections.append(f"{method} {self.path}: {answer['error']['message']}")
        self.send(status, json.dumps(answer).encode())

    def _refused_betas(self) -> bool:
        """An empty anthropic-beta value is refused as the API refuses it (aaronrussell/anthropix #15)."""
        if "" not in beta_names(self.headers):
            return False
        message = ("Unexpected value(s) `` for the `anthropic-beta` header. Please consult our documentation at "
                   "docs.anthropic.com or try again without the header.")
        with self.server.fake._lock:
            self.server.fake.rejections.append(f"{self.path}: {message}")
        self.send(400, json.dumps({"type": "error", "error": {"type": "invalid_request_error", "message": message}})
                  .encode())
        return True

    def do_POST(self):
        if self.path.startswith("/v1/files"):
            self._files("POST")
            return
        if not self.path.startswith("/v1/messages"):
            self.send(404, b'{"type":"error","error":{"type":"not_found_error","message":"no route"}}')
            return
        arrived = time.monotonic()  # the request left the bot; reading and parsing it is our cost
        fake: FakeAnthropic = self.server.fake
        raw = self.body()
        if len(raw) > fake.request_limit:
            with fake._lock:
                fake.rejections.append(f"request of {len(raw):,} bytes: {TOO_LARGE[1]['error']['message']}")
            self.send(TOO_LARGE[0], json.dumps(TOO_LARGE[1]).encode())
            return
        if self._refused_betas():
            return
        request = json.loads(raw)
        with fake._lock:
            fake.headers.append(dict(self.headers))
        index, script = fake.next_script(request, arrived, set(beta_names(self.headers)))
        if script.status:
            error = {"type": script.error_type, "message": script.error_message}
            if script.error_details:
                error["details"] = script.error_details
            self.send(script.status, json.dumps({"type": "error", "error": error,
                                                 "request_id": f"req_fake{index:06d}"}).encode())
            return
        content, tool_use = answer(request, script)
        if any(b["type"] == "tool_use" for b in content):
            script = replace(script, stop_reason="tool_use")  # the client performs the calls, then asks again
        # the servers' tool listings were fetched before Claude wrote anything (mcp_rules.py)
        content = listing_blocks(request, script.mcp) + fake.thinking.blocks(request, script.thinking,
                                                                              script.redacted) + content
        if script.stop_reason == "pause_turn":
            fake.thinking.paused(request, content)
        usage = _usage(fake.cache, request, script, "".join(b["text"] for b in content if b["type"] == "text"),
                       fake.files.sources())
        if tool_use is not None:
            usage["server_tool_use"] = tool_use
        if any(b["type"] == "thinking" for b in content) and "output_tokens" not in script.usage:
            usage["output_tokens"] += script.thinking_tokens  # thinking is billed as output
        with fake._lock:
            fake.usages[index] = usage
            fake.answers[index] = content
        if request.get("stream"):
            self._stream(index, request, script, content, usage)
        else:
            message = _message(request, content, usage, script.stop_reason)
            if script.stop_details:
                message["stop_details"] = script.stop_details
            self.send(200, json.dumps(message).encode())
        with fake._lock:
            fake.finished_at[index] = time.monotonic()

    def _stream(self, index: int, request: dict, script: Script, content: list[dict], usage: dict) -> None:
        self._sent = 0
        try:
            self._events(request, script, content, usage)
        except _ClientGone:
            with self.server.fake._lock:
                self.server.fake.cancelled[index] = Cancelled(self._sent, time.monotonic())
            self.close_connection = True

    def _events(self, request: dict, script: Script, content: list[dict], usage: dict) -> None:
        self.send_response(200)
        self.send_header("Content-Type", "text/event-stream")
        self.send_header("Cache-Control", "no-cache")
        self.send_header("Transfer-Encoding", "chunked")
        self.end_headers()
        opening = {**usage, "output_tokens": 1}
        if "server_tool_use" in usage:
            opening["server_tool_use"] = {"web_search_requests": 0, "web_fetch_requests": 0}
        self._event("message_start", {"type": "message_start", "message": _message(request, [], opening, None)})
        sent = 0  # text deltas so far, for error_after
        for index, block in enumerate(content):
            if block["type"] == "thinking":
                self._thinking(index, block, script)
                continue
            if block["type"] != "text":
                for name, data in streamed(index, block):
                    self._event(name, data)
                continue
            start = {"type": "text", "text": ""}
            if "citations" in block:
                start["citations"] = []
            self._event("content_block_start", {"type": "content_block_start", "index": index, "content_block": start})
            for citation in block.get("citations", []):
                self._event("content_block_delta", {"type": "content_block_delta", "index": index,
                                                    "delta": {"type": "citations_delta", "citation": citation}})
            for piece in _pieces(block["text"], script.chunks):
                if script.error_after is not None and sent >= script.error_after:
                    self._event("error", {"type": "error",
                                          "error": {"type": "overloaded_error", "message": "Overloaded"}})
                    self._chunk(b"")
                    self.close_connection = True
                    return
                if script.chunk_delay:
                    time.sleep(script.chunk_delay)
                if sent == 0:  # stamped as it is sent: the bot may show it before this thread runs again
                    with self.server.fake._lock:
                        self.server.fake.first_delta_at.append(time.monotonic())
                self._event("content_block_delta", {"type": "content_block_delta", "index": index,
                                                    "delta": {"type": "text_delta", "text": piece}})
                self._sent += 1
                sent += 1
            self._event("content_block_stop", {"type": "content_block_stop", "index": index})
        # message_delta's usage is cumulative: the input and cache counts again, beside the final output
        closing = {name: usage[name] for name in ("input_tokens", "cache_creation_input_tokens",
                                                   "cache_read_input_tokens", "output_tokens") if name in usage}
        if "server_tool_use" in usage:
            closing["server_tool_use"] = usage["server_tool_use"]
        delta = {"stop_reason": script.stop_reason, "stop_sequence": None}
        if script.stop_details:
            delta["stop_details"] = script.stop_details
        self._event("message_delta", {"type": "message_delta", "delta": delta, "usage": closing})
        if script.stop_delay:
            time.sleep(script.stop_delay)
        self._event("message_stop", {"type": "message_stop"})
        self._chunk(b"")  # the stream's end: the connection is free for the next request

    def _thinking(self, index: int, block: dict, script: Script) -> None:
        """A thinking block as the API streams it: started empty, its text in thinking_delta events (one empty
        one when its display is "omitted"), its signature in one signature_delta last."""
        self._event("content_block_start", {"type": "content_block_start", "index": index,
                                            "content_block": {"type": "thinking", "thinking": "", "signature": ""}})
        for piece in _pieces(block["thinking"], script.chunks):  # chunk_delay paces the text; thinking_delay this
            self._event("content_block_delta", {"type": "content_block_delta", "index": index,
                                                "delta": {"type": "thinking_delta", "thinking": piece}})
        thought_until = time.monotonic() + script.thinking_delay
        while time.monotonic() < thought_until:  # thinking: a client that leaves meanwhile is noticed at once
            if self._client_left():
                raise _ClientGone()
            time.sleep(0.02)
        self._event("content_block_delta", {"type": "content_block_delta", "index": index,
                                            "delta": {"type": "signature_delta", "signature": block["signature"]}})
        self._event("content_block_stop", {"type": "content_block_stop", "index": index})

    def _event(self, name: str, data: dict) -> None:
        if self._client_left():
            raise _ClientGone()
        self._chunk(f"event: {name}\ndata: {json.dumps(data)}\n\n".encode())

    def _chunk(self, data: bytes) -> None:
        """One chunk of a chunked body (an empty one ends it)."""
        try:
            self.wfile.write(b"%x\r\n%s\r\n" % (len(data), data))
            self.wfile.flush()
        except (BrokenPipeError, ConnectionResetError):
            raise _ClientGone() from None

    def _client_left(self) -> bool:
        """The client closed the connection (it sends nothing more on a stream: readable means gone)."""
        try:
            readable, _, _ = select.select([self.connection], [], [], 0)
            return bool(readable) and self.connection.recv(1, socket.MSG_PEEK) == b""
        except (OSError, ValueError):
            return True


def _message(request: dict, content: list[dict], usage: dict, stop_reason: str | None) -> dict:
    """A Message object; an answer that is one empty text block has no content and no stop reason."""
    if [b for b in content if b != {"type": "text", "text": ""}] == []:
        content, stop_reason = [], None
    return {"id": "msg_fake", "type": "message", "role": "assistant", "model": request.get("model"),
            "content": content, "stop_reason": stop_reason, "stop_sequence": None, "usage": usage}
