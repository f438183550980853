"""The single streaming call to Claude, with SDK errors translated into ModelUnavailable."""
from __future__ import annotations

import logging
from collections.abc import Callable

import anthropic
import httpx2
from anthropic import Stream
from anthropic.types import Message, RawMessageStreamEvent

from ..domain.context import ModelInput
from ..domain.errors import ModelUnavailable
from ..domain.model import Usage
from ..domain.text import storable
from ..services.ports import Completion
from .request import RequestEncoder

log = logging.getLogger(__name__)

OnText = Callable[[str], None]


class Claude:
    def __init__(self, api_key: str, model: str, *, base_url: str | None = None, max_tokens: int = 8192,
                 timeout: float = 600.0, max_retries: int = 2):
        self.model = model
        self.max_tokens = max_tokens
        self.encoder = RequestEncoder(model, max_tokens)
        self._client = anthropic.Anthropic(api_key=api_key, base_url=base_url, timeout=timeout,
                                           max_retries=max_retries)

    def complete(self, model_input: ModelInput, on_text: OnText | None = None) -> Completion:
        body = self.encoder.encode(model_input)
        parts: list[str] = []
        counts: dict[str, int] = {}
        try:
            # the body goes in pre-encoded: the SDK still adds auth, retries and timeouts and parses
            # the SSE events, but no longer copies and re-encodes a history of hundreds of KB. The
            # events are read as they come instead of through MessageStream, whose snapshot
            # building re-creates a pydantic generic class per message (~2 ms, and garbage).
            with self._client.post("/v1/messages", content=body, cast_to=Message, stream=True,
                                   stream_cls=Stream[RawMessageStreamEvent]) as events:
                for event in events:
                    if event.type == "content_block_delta" and event.delta.type == "text_delta":
                        delta = storable(event.delta.text)
                        parts.append(delta)
                        if on_text:
                            on_text(delta)
                    elif event.type == "message_start":
                        counts = _counts(event.message.usage)
                    elif event.type == "message_delta":
                        counts.update(_counts(event.usage))  # final counts override the first ones
        except anthropic.APIStatusError as error:
            raise _status_error(error) from None
        except (anthropic.APITimeoutError, httpx2.TimeoutException, TimeoutError):
            # a timeout while the stream is being read arrives unwrapped
            raise ModelUnavailable("Claude did not answer in time") from None
        except (anthropic.APIConnectionError, httpx2.TransportError):
            raise ModelUnavailable("Claude could not be reached") from None
        return Completion(text="".join(parts), usage=Usage(**counts))


_USAGE_FIELDS = {"input_tokens": "input_tokens", "output_tokens": "output_tokens",
                 "cache_read_input_tokens": "cache_read_tokens", "cache_creation_input_tokens": "cache_write_tokens"}


def _counts(usage) -> dict[str, int]:
    """The token counts an event reports (a message_delta leaves out what did not change)."""
    return {ours: value for theirs, ours in _USAGE_FIELDS.items() if (value := getattr(usage, theirs, None)) is not None}


def _status_error(error: anthropic.APIStatusError) -> ModelUnavailable:
    status = getattr(error, "status_code", None)
    body = getattr(error, "body", None)
    kind = body.get("error", {}).get("type") if isinstance(body, dict) else None
    log.warning("Claude API error: status=%s type=%s", status, kind)
    if status == 529 or kind == "overloaded_error":
        return ModelUnavailable("Claude is overloaded")
    if status == 429:
        return ModelUnavailable("Claude's rate limit was reached")
    if status and status >= 500:
        return ModelUnavailable(f"Claude had a server error ({status})")
    return ModelUnavailable(f"Claude refused the request ({status or kind})")
