"""Turn a domain ModelInput into Messages API arguments. Pure: no SDK import."""
from __future__ import annotations

from ..domain.context import ModelInput


def build_request(model: str, max_tokens: int, model_input: ModelInput) -> dict:
    return {
        "model": model,
        "max_tokens": max_tokens,
        "system": [{"type": "text", "text": model_input.system, "cache_control": {"type": "ephemeral"}}],
        "messages": model_input.messages(),
    }
