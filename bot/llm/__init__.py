"""The Anthropic adapter: a pure request builder and the one streaming call."""
from .claude import Claude
from .request import RequestEncoder, build_request

__all__ = ["Claude", "RequestEncoder", "build_request"]
