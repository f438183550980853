"""The single streaming call to Claude, with SDK errors translated into ModelUnavailable.

The SDK's own HTTP client (httpx) carries every request: its connection pool and keep-alive, TLS (SSL_CERT_FILE
honoured), proxies from the environment (HTTPS_PROXY, NO_PROXY…), timeouts and retries.

Stop (a StopSignal): the stream's connection is shut down from whichever thread the stop comes on — the
reading thread wakes at once, even with no event on its way — so the API stops generating (and billing);
what was read until then is the completion, `stopped`.

The request encoder (`RequestEncoder`) turns a domain ModelInput into the Messages API request body: pure,
no SDK call, the same bytes for the same input.
"""
from __future__ import annotations

import logging
import socket

import anthropic
import httpx2
import orjson
from anthropic import Stream
from anthropic.types import Message

from ..domain.caching import cache_control
from ..domain.context import ModelInput
from ..domain.errors import ModelUnavailable
from ..domain.memory_files import MEMORY_TOOL
from ..domain.model import Usage
from ..domain.spend import ceiling, takes_effort
from ..infrastructure import metrics
from ..services.ports import Completion, ReplyEvents, StopSignal
from .reading import Reading


# Anthropic's server tools, by the names THREADFORK_TOOLS uses: Claude searches and fetches the web
# itself, within one request (its results come back in the stream; see reading.py)
SERVER_TOOLS = {"web_search": "web_search_20250305", "web_fetch": "web_fetch_20250910"}


def server_tools(names: tuple[str, ...], max_uses: int) -> list[dict]:
    """The `tools` of a request: each named server tool, capped at `max_uses` uses per request."""
    return [{"type": SERVER_TOOLS[name], "name": name, "max_uses": max_uses} for name in names]


# the Messages API's MCP connector (platform.claude.com "MCP connector"): the API calls the remote
# servers itself during the answer; the request names them and says which of their tools Claude may use
MCP_BETA = "mcp-client-2026-09-15"


def mcp_servers(model_input: ModelInput) -> list[dict]:
    """`mcp_servers`: each connector with its token, if it has one (read just now, never stored)."""
    servers = []
    for connector in model_input.connectors:
        server = {"type": "url", "url": connector.url, "name": connector.name}
        token = model_input.tokens.get(connector.name)
        servers.append({**server, "authorization_token": token} if token else server)
    return servers


def mcp_toolsets(model_input: ModelInput) -> list[dict]:
    """One `mcp_toolset` per connector: every tool, or only the allowed ones (all off, those on)."""
    toolsets = []
    for connector in model_input.connectors:
        toolset = {"type": "mcp_toolset", "mcp_server_name": connector.name}
        if connector.allowed_tools is not None:
            toolset["default_config"] = {"enabled": False}
            toolset["configs"] = {name: {"enabled": True} for name in connector.allowed_tools}
        toolsets.append(toolset)
    return toolsets


def output_config(model: str, effort: str | None) -> dict:
    """`output_config.effort` (platform.claude.com "Effort"): low, medium or high for a model that takes it;
    nothing for the API's default or a model that takes no effort (it would answer 400)."""
    if not effort or effort == "default" or not takes_effort(model):
        return {}
    return {"output_config": {"effort": effort}}


def _system(model_input: ModelInput) -> list[dict]:
    return [{"type": "text", "text": model_input.system, "cache_control": cache_control(model_input.system_ttl)}]


class RequestEncoder:
    """The one builder of a Messages API request: `request()` is its body, `encode()` that body's bytes,
    the same bytes for the same input every time (the prompt cache reads them). orjson encodes it in one
    call: a 1,000-turn history (~460 KB) in ~0.6 ms, where the SDK's copy and stdlib encoding took ~15 ms.
    Its keys keep the order Threadfork has always sent, the messages last."""

    def __init__(self, model: str, max_tokens: int, tools: list[dict] | None = None, tool_max_uses: int = 5,
                 effort: str = "default"):
        self.model = model
        self.effort = effort  # THREADFORK_EFFORT: where a channel chose none
        self.max_tokens = max_tokens
        self.tools = tools or None  # no `tools` key at all without tools
        self.tool_max_uses = tool_max_uses  # for a channel's own choice of tools

    def request(self, model_input: ModelInput, continuation: list[dict] | None = None) -> dict:
        """The body; a channel's own model, tools and effort in `model_input` win over the configured ones.
        `continuation`: the answer so far, as messages after the input's — the assistant's content blocks handed
        back as they came (thinking signed), and the memory tool's results after its calls."""
        tools = self.tools if model_input.tools is None else server_tools(model_input.tools, self.tool_max_uses)
        tools = [*(tools or ()), *mcp_toolsets(model_input), *([MEMORY_TOOL] if model_input.memory else [])]
        model = model_input.model or self.model
        request = {"model": model, "max_tokens": self.max_tokens, "stream": True,
                   **output_config(model, model_input.effort or self.effort), "system": _system(model_input)}
        if tools:
            request["tools"] = tools
        if model_input.connectors:
            request["mcp_servers"] = mcp_servers(model_input)
        request["messages"] = model_input.messages() + list(continuation or ())
        return request

    def encode(self, model_input: ModelInput, continuation: list[dict] | None = None) -> bytes:
        return orjson.dumps(self.request(model_input, continuation))


log = logging.getLogger(__name__)

MAX_RESUMES = 3  # a paused turn handed back at most this often
MAX_ROUNDS = 8  # calls one answer may take in all: resumes, and the memory tool's calls answered


class _NoRequestBodies(logging.Filter):
    """The SDK logs each request's options at DEBUG, its body included — connectors' tokens and people's
    words: those lines are dropped, the SDK's other lines kept."""

    def filter(self, record: logging.LogRecord) -> bool:
        return not (isinstance(record.msg, str) and record.msg.startswith("Request options"))


def _quiet_request_bodies() -> None:
    sdk = logging.getLogger("anthropic._base_client")
    if not any(isinstance(f, _NoRequestBodies) for f in sdk.filters):
        sdk.addFilter(_NoRequestBodies())


class Claude:
    """The Model port on Anthropic's API: one streaming call per answer, and file uploads."""

    def __init__(self, api_key: str, model: str, *, base_url: str | None = None, max_tokens: int = 32_000,
                 timeout: float = 600.0, max_retries: int = 2, tools: tuple[str, ...] = (), tool_max_uses: int = 5,
                 effort: str = "default"):
        self.model = model
        self.max_tokens = max_tokens
        self.encoder = RequestEncoder(model, max_tokens, server_tools(tools, tool_max_uses), tool_max_uses=tool_max_uses,
                                      effort=effort)
        _quiet_request_bodies()
        self._client = anthropic.Anthropic(api_key=api_key, base_url=base_url, timeout=timeout,
                                           max_retries=max_retries)

    def complete(self, model_input: ModelInput, events: ReplyEvents | None = None,
                 stop: StopSignal | None = None) -> Completion:
        body = self.encoder.encode(model_input)
        reading = Reading(events, model_input.model or self.model, secrets=model_input.tokens.values())
        try:
            self._answer(body, reading, model_input, stop)
        except ModelUnavailable:
            if _stopped(stop):  # the stream was shut down under the reader: that is the stop, not a failure
                return reading.completion(stopped=True)
            raise
        # a stop that came once the answer was whole (its stop reason read) stops nothing
        return reading.completion(stopped=_stopped(stop) and reading.stop_reason is None)

    def _answer(self, body: bytes, reading: Reading, model_input: ModelInput, stop: StopSignal | None) -> None:
        # the body holds connectors' tokens: it is never logged, kept or put in an error
        headers = {"anthropic-beta": MCP_BETA} if model_input.connectors else {}
        continuation: list[dict] = []  # the answer so far, as messages after the input's
        try:
            self._stream(body, reading, headers, stop)
            resumes = 0
            for _ in range(MAX_ROUNDS):
                if _stopped(stop):
                    break
                if reading.stop_reason == "pause_turn" and resumes < MAX_RESUMES:  # a long research turn
                    resumes += 1
                    _handed_back(continuation, reading.resume())
                elif reading.stop_reason == "tool_use" and model_input.memory and reading.client_calls():
                    calls = reading.client_calls()  # the memory tool's: done here, answered, and the answer goes on
                    _handed_back(continuation, reading.resume())
                    continuation.append({"role": "user", "content": [_tool_result(model_input, c) for c in calls]})
                else:
                    break
                self._stream(self.encoder.encode(model_input, continuation), reading, headers, stop)
        except anthropic.APIStatusError as error:
            raise _status_error(error, model_input.model or self.model) from None
        except (anthropic.APITimeoutError, httpx2.TimeoutException, TimeoutError):
            # a timeout while the stream is being read arrives unwrapped
            raise ModelUnavailable("Claude did not answer in time") from None
        except (anthropic.APIConnectionError, httpx2.TransportError):
            raise ModelUnavailable("Claude could not be reached") from None

    def _stream(self, body: bytes, reading: Reading, headers: dict[str, str], stop: StopSignal | None) -> None:
        # the body goes in pre-encoded: the SDK still adds auth, retries and timeouts, decodes the SSE
        # events and raises an `error` event as its error, but no longer copies and re-encodes a history of
        # hundreds of KB. Each event comes as its JSON (Stream[object]), not as the SDK's models, and is
        # read as it comes, not through MessageStream, whose snapshot building re-creates a pydantic generic
        # class per message (~2 ms, and garbage).
        if _stopped(stop):
            return
        metrics.MODEL_REQUESTS.inc()
        with self._client.post("/v1/messages", content=body, cast_to=Message, stream=True,
                               stream_cls=Stream[object], options={"headers": headers}) as stream:
            if stop is not None:
                stop.on_stop(lambda: _shut(stream))
            try:
                for event in stream:
                    if _stopped(stop):
                        break  # leaving the block closes the response
                    reading.read(event)
            finally:
                if stop is not None:
                    stop.on_stop(None)

    def ceiling(self, model_input: ModelInput) -> tuple[str, Usage]:
        return model_input.model or self.model, ceiling(model_input, self.max_tokens)

    def upload(self, name: str, media_type: str, data: bytes) -> str:
        try:
            uploaded = self._client.files.upload(file=(name, data, media_type))
        except anthropic.APIStatusError as error:
            raise _status_error(error) from None
        except (anthropic.APITimeoutError, anthropic.APIConnectionError, httpx2.TransportError):
            raise ModelUnavailable("Claude's file store could not be reached") from None
        return uploaded.id

    def forget_upload(self, file_id: str) -> None:
        try:
            self._client.files.delete(file_id)
        except anthropic.APIStatusError as error:
            if not _gone(error):
                raise _status_error(error) from None
        except (anthropic.APITimeoutError, anthropic.APIConnectionError, httpx2.TransportError):
            raise ModelUnavailable("Claude's file store could not be reached") from None


def _handed_back(continuation: list[dict], content: list[dict]) -> None:
    """A round's content after the answer so far: a paused round's continues the assistant's last message."""
    if continuation and continuation[-1]["role"] == "assistant":
        continuation[-1]["content"] += content
    else:
        continuation.append({"role": "assistant", "content": content})


def _tool_result(model_input: ModelInput, call: dict) -> dict:
    """A client tool use answered: the memory tool's result (any other tool is refused, as none is offered)."""
    if call.get("name") == "memory" and model_input.memory:
        try:
            text, failed = model_input.memory(call.get("input") or {})
        except Exception:
            log.exception("the memory tool failed")
            text, failed = "The memory could not be changed just now.", True
    else:
        text, failed = f"No tool named {call.get('name')} is available.", True
    result = {"type": "tool_result", "tool_use_id": call["id"], "content": text}
    return {**result, "is_error": True} if failed else result


def _stopped(stop: StopSignal | None) -> bool:
    return stop is not None and stop.requested()


def _shut(stream: Stream) -> None:
    """End the stream now, from any thread: shutting its socket down wakes a read blocked on it (closing the
    response alone would leave the reader waiting for the next event). The socket is httpx's documented
    `network_stream` response extension's."""
    network = stream.response.extensions.get("network_stream")
    sock = network.get_extra_info("socket") if network is not None else None
    if sock is not None:
        try:
            sock.shutdown(socket.SHUT_RDWR)
        except OSError:
            pass  # already closed
    stream.close()


def _gone(error: anthropic.APIStatusError) -> bool:
    return getattr(error, "status_code", None) == 404


def _status_error(error: anthropic.APIStatusError, model: str | None = None) -> ModelUnavailable:
    status = getattr(error, "status_code", None)
    body = getattr(error, "body", None)
    kind = body.get("error", {}).get("type") if isinstance(body, dict) else None
    log.warning("Claude API error: status=%s type=%s", status, kind)
    message = body.get("error", {}).get("message") if isinstance(body, dict) else None
    # the API names the model it does not know ("model: claude-…"); a 404 for a file names the file
    if model and status == 404 and kind == "not_found_error" and model in str(message or ""):
        return ModelUnavailable(f"Anthropic no longer offers the model {model} (404 not_found_error): a channel "
                                "admin can choose another in /threadfork settings, or an operator in THREADFORK_MODEL")
    if status == 529 or kind == "overloaded_error":
        return ModelUnavailable("Claude is overloaded")
    if status == 429:
        return ModelUnavailable("Claude's rate limit was reached")
    if status and status >= 500:
        return ModelUnavailable(f"Claude had a server error ({status})")
    return ModelUnavailable(f"Claude refused the request ({status or kind})")
