"""The Anthropic adapter: the one request encoder and the one streaming call."""
from .claude import Claude
from .request import RequestEncoder

__all__ = ["Claude", "RequestEncoder"]
