"""Which MCP connectors a request names, and their tokens, read as the request is made.

A channel's connectors are its own choice, or THREADFORK_CONNECTORS where it made none; a fork uses the
ones it snapshotted when it opened. A token is the channel's own (sealed in the store, opened here), or,
for a default connector the channel kept as configured (same name and URL), the environment's. Tokens
are read at every request, so a rotated one takes effect at once, and live only in the request.
"""
from __future__ import annotations

from collections.abc import Mapping
from dataclasses import replace

from ..domain.connectors import Connector
from ..domain.context import ModelInput
from ..domain.model import Channel
from ..domain.settings import ChannelSettings
from .ports import ConnectorTokens, Secrets


class Connections:
    def __init__(self, tokens: ConnectorTokens, secrets: Secrets | None, defaults: tuple[Connector, ...] = (),
                 default_tokens: Mapping[str, str] | None = None):
        self.tokens = tokens
        self.secrets = secrets
        self.defaults = defaults
        self._default_tokens = {c.name: (c.url, (default_tokens or {}).get(c.name)) for c in defaults}

    def of_channel(self, chosen: ChannelSettings) -> tuple[Connector, ...]:
        """The connectors a channel's settings (its own choices) give its parent session."""
        return chosen.connectors if chosen.connectors is not None else self.defaults

    def has_default_token(self, connector: Connector) -> bool:
        url, token = self._default_tokens.get(connector.name, (None, None))
        return bool(token) and url == connector.url

    def attach(self, model_input: ModelInput, channel: Channel) -> ModelInput:
        """`model_input` with its connectors' tokens, read now."""
        if not model_input.connectors:
            return model_input
        sealed = self.tokens.sealed(channel)
        tokens = {}
        for connector in model_input.connectors:
            if connector.name in sealed:
                token = self.secrets.open(sealed[connector.name]) if self.secrets else None
            else:
                url, token = self._default_tokens.get(connector.name, (None, None))
                token = token if url == connector.url else None
            if token:
                tokens[connector.name] = token
        return replace(model_input, tokens=tokens)
