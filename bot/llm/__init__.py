"""The Anthropic adapter: a pure request builder and the one streaming call."""
from .claude import Claude, Completion
from .request import RequestEncoder, build_request

__all__ = ["Claude", "Completion", "RequestEncoder", "build_request"]
