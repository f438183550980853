"""A fake Anthropic Messages API: plain JSON and SSE streams, usage numbers, scripted replies and
errors (HTTP status errors before the stream, or an `error` event in the middle of it).

By default it answers "Answer N" (N counts requests) and, for a merge request, a summary that
quotes the fork's last user turn so tests can follow text end to end.

`GET /v1/models/{id}` describes any model, with an `x-threadfork-fake` header: the recall eval
(bot/eval/endpoint.py) asks it before any turn and knows from that header that its accuracy means
nothing.

It is as strict as the real API (messages_rules.py): a request the API would refuse is answered
400 `invalid_request_error` with the API's message, uses up no script, and is recorded in
`rejections`, which the test fixtures assert to be empty.
"""
from __future__ import annotations

import json
import threading
import time
from collections import deque
from dataclasses import dataclass, field

from .http import BackgroundServer, QuietHandler
from .messages_rules import refusal


@dataclass
class Script:
    text: str | None = None
    usage: dict = field(default_factory=dict)  # input_tokens, output_tokens, cache_read_input_tokens…
    status: int | None = None  # HTTP error before any byte of the answer
    error_type: str = "api_error"
    error_message: str = "scripted failure"
    error_after: int | None = None  # send this many text chunks, then an error event mid-stream
    chunk_delay: float = 0.0  # seconds between streamed chunks
    chunks: int = 4


class FakeAnthropic:
    def __init__(self):
        self.requests: list[dict] = []
        self.rejections: list[str] = []  # what the real API would have answered 400
        self.headers: list[dict] = []
        self.first_delta_at: list[float] = []  # monotonic time each stream sent its first text
        self.received_at: list[float] = []  # monotonic time each request arrived, by request index
        self.finished_at: dict[int, float] = {}  # request index → when its last event was sent
        self.default_script: Script | None = None  # answer every unscripted request with this
        self._scripts: deque[Script] = deque()
        self._lock = threading.Lock()
        self.server = BackgroundServer(_Handler)
        self.server.httpd.fake = self

    @property
    def url(self) -> str:
        return self.server.url

    def reset(self) -> None:
        """Forget every request and script, as a fresh fake would (between property-test examples)."""
        with self._lock:
            for record in (self.requests, self.headers, self.first_delta_at, self.received_at, self._scripts):
                record.clear()
            self.finished_at.clear()
            self.default_script = None

    def script(self, *scripts: Script) -> None:
        with self._lock:
            self._scripts.extend(scripts)

    def start(self) -> FakeAnthropic:
        self.server.start()
        return self

    def stop(self) -> None:
        self.server.stop()

    def next_script(self, request: dict, arrived: float) -> tuple[int, Script]:
        with self._lock:
            self.requests.append(request)
            self.received_at.append(arrived)
            number = len(self.requests)
            refused = refusal(request)
            if refused:
                self.rejections.append(f"request {number}: {refused}")
                return number - 1, Script(status=400, error_type="invalid_request_error", error_message=refused)
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
    message = request["messages"][-1]
    return message["content"][-1]["text"] if isinstance(message["content"], list) else message["content"]


def last_fork_turn(request: dict) -> str:
    """The last user turn before the merge prompt, without its speaker line."""
    texts = [t for t in request_texts(request)[1:] if not t.startswith("[Merge request]")]
    return texts[-1].split("\n", 1)[-1] if texts else ""


def request_texts(request: dict) -> list[str]:
    """Every text block of a request, in order (system first)."""
    texts = [b["text"] for b in request.get("system", [])] if isinstance(request.get("system"), list) else []
    for message in request["messages"]:
        content = message["content"]
        texts.extend([b["text"] for b in content] if isinstance(content, list) else [content])
    return texts


def _usage(request: dict, script: Script, text: str) -> dict:
    usage = {
        "input_tokens": max(1, len(json.dumps(request["messages"])) // 4),
        "output_tokens": max(1, len(text) // 4),
        "cache_read_input_tokens": 0,
        "cache_creation_input_tokens": 0,
    }
    usage.update(script.usage)
    return usage


def _pieces(text: str, count: int) -> list[str]:
    size = max(1, -(-len(text) // max(1, count)))
    return [text[i:i + size] for i in range(0, len(text), size)] or [""]


class _Handler(QuietHandler):
    def do_GET(self):
        if not self.path.startswith("/v1/models/"):
            self.send(404, b'{"type":"error","error":{"type":"not_found_error","message":"no route"}}')
            return
        model = self.path.removeprefix("/v1/models/").split("?")[0]
        info = {"type": "model", "id": model, "display_name": f"{model} (fake)", "created_at": "2026-01-01T00:00:00Z"}
        self.send(200, json.dumps(info).encode(), headers={"x-threadfork-fake": "anthropic"})

    def do_POST(self):
        if not self.path.startswith("/v1/messages"):
            self.send(404, b'{"type":"error","error":{"type":"not_found_error","message":"no route"}}')
            return
        arrived = time.monotonic()  # the request left the bot; reading and parsing it is our cost
        request = json.loads(self.body())
        fake: FakeAnthropic = self.server.fake
        with fake._lock:
            fake.headers.append(dict(self.headers))
        index, script = fake.next_script(request, arrived)
        if script.status:
            error = {"type": "error", "error": {"type": script.error_type, "message": script.error_message},
                     "request_id": f"req_fake{index:06d}"}
            self.send(script.status, json.dumps(error).encode())
            return
        text = script.text or ""
        usage = _usage(request, script, text)
        if request.get("stream"):
            self._stream(request, script, text, usage)
        else:
            self.send(200, json.dumps(_message(request, text, usage)).encode())
        with fake._lock:
            fake.finished_at[index] = time.monotonic()

    def _stream(self, request: dict, script: Script, text: str, usage: dict) -> None:
        self.send_response(200)
        self.send_header("Content-Type", "text/event-stream")
        self.send_header("Cache-Control", "no-cache")
        self.send_header("Connection", "close")
        self.end_headers()
        start = _message(request, "", {**usage, "output_tokens": 1})
        self._event("message_start", {"type": "message_start", "message": start})
        self._event("content_block_start", {"type": "content_block_start", "index": 0,
                                            "content_block": {"type": "text", "text": ""}})
        for number, piece in enumerate(_pieces(text, script.chunks)):
            if script.error_after is not None and number >= script.error_after:
                self._event("error", {"type": "error", "error": {"type": "overloaded_error", "message": "Overloaded"}})
                self.close_connection = True
                return
            if script.chunk_delay:
                time.sleep(script.chunk_delay)
            self._event("content_block_delta", {"type": "content_block_delta", "index": 0,
                                                "delta": {"type": "text_delta", "text": piece}})
            if number == 0:
                with self.server.fake._lock:
                    self.server.fake.first_delta_at.append(time.monotonic())
        self._event("content_block_stop", {"type": "content_block_stop", "index": 0})
        self._event("message_delta", {"type": "message_delta",
                                      "delta": {"stop_reason": "end_turn", "stop_sequence": None},
                                      "usage": {"output_tokens": usage["output_tokens"]}})
        self._event("message_stop", {"type": "message_stop"})
        self.close_connection = True

    def _event(self, name: str, data: dict) -> None:
        self.wfile.write(f"event: {name}\ndata: {json.dumps(data)}\n\n".encode())
        self.wfile.flush()


def _message(request: dict, text: str, usage: dict) -> dict:
    return {"id": "msg_fake", "type": "message", "role": "assistant", "model": request.get("model"),
            "content": [{"type": "text", "text": text}] if text else [],
            "stop_reason": "end_turn" if text else None, "stop_sequence": None, "usage": usage}
