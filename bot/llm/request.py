"""Turn a domain ModelInput into the Messages API request body. Pure: no SDK import."""
from __future__ import annotations

import orjson

from ..domain.context import ModelInput


def build_request(model: str, max_tokens: int, model_input: ModelInput) -> dict:
    return {
        "model": model,
        "max_tokens": max_tokens,
        "system": [{"type": "text", "text": model_input.system, "cache_control": {"type": "ephemeral"}}],
        "messages": model_input.messages(),
        "stream": True,
    }


def encode_request(model: str, max_tokens: int, model_input: ModelInput) -> bytes:
    """The streaming request's JSON body. orjson encodes a 1,000-turn history (~400 KB) in well
    under a millisecond where the SDK's copy + stdlib encoding took ~15 ms."""
    return orjson.dumps(build_request(model, max_tokens, model_input))
