"""A session's model input, read out of the store: the fork pointers are resolved here.

Which MCP connectors a request names, and their tokens, read as the request is made.

A channel's connectors are its own choice, or THREADFORK_CONNECTORS where it made none; a fork uses the
ones it snapshotted when it opened. A token is the channel's own (sealed in the store, opened here), or,
for a default connector the channel kept as configured (same name and URL), the environment's. Tokens
are read at every request, so a rotated one takes effect at once, and live only in the request.
"""
from __future__ import annotations

from collections.abc import Mapping
from dataclasses import replace

from ..domain.caching import CacheMode
from ..domain.connectors import Connector
from ..domain.context import ModelInput, asking, fork_input, parent_input
from ..domain.model import Channel, Fork, Mode, Session, Turn
from ..domain.settings import ChannelSettings
from .ports import ChannelSettingsStore, ConnectorTokens, Secrets, Sessions, TurnQueue


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


class ModelInputs:
    """Reads what a request is made of: the fork chain (sessions), its turns and the channel's settings."""

    def __init__(self, *, sessions: Sessions, turns: TurnQueue, channel_settings: ChannelSettingsStore):
        self.sessions, self.turns, self.channel_settings = sessions, turns, channel_settings

    def of_session(self, session: Session, history: list[Turn] | None = None, chosen: ChannelSettings | None = None,
                   connections: Connections | None = None, cache: CacheMode = CacheMode.AUTO) -> ModelInput:
        """The input that asks for the session's next answer. `history`: the session's own turns, and
        `chosen`: its channel's settings, when the caller has just read them; `connections`: its MCP
        connectors' (none without); `cache`: how breakpoints' TTLs are chosen (THREADFORK_CACHE_TTL)."""
        if session.fork is None:
            chosen = self.channel_settings.of(session.channel) if chosen is None else chosen
            base = parent_input(self.turns.turns(session.id) if history is None else history, session.pruned, cache)
            connectors = connections.of_channel(chosen) if connections else ()
            asked = replace(asking(base.configured(chosen.instructions, chosen.model, chosen.tools, connectors)),
                            effort=chosen.effort)
            return connections.attach(asked, session.channel) if connections else asked
        # a fork answers at its channel's effort as it is now (effort changes no request's cached bytes)
        effort = (chosen if chosen is not None else self.channel_settings.of(session.fork.home)).effort
        return replace(asking(self.of_fork(session.fork, history, connections, cache)), effort=effort)

    def of_fork(self, fork: Fork, history: list[Turn] | None = None, connections: Connections | None = None,
                cache: CacheMode = CacheMode.AUTO) -> ModelInput:
        """Up the chain of inheriting forks to the channel: each level's turns up to its child's fork point.
        A fork keeps its channel's instructions, model, tools and connectors as they were at its fork point
        (a snapshot); its connectors' tokens are read now."""
        configured = self._fork_input(fork, history, cache).configured(fork.instructions, fork.model, fork.tools,
                                                                       fork.connectors if connections else ())
        if not connections or not configured.connectors:
            return configured
        return connections.attach(configured, self._settings_home(fork))

    def _settings_home(self, fork: Fork) -> Channel:
        """The channel whose settings (and connectors' tokens) the fork's snapshot came from: its top fork's home
        (for a private fork, the channel it forks, not the DM its thread is in)."""
        while fork.nested:
            fork = self.sessions.fork(fork.parent_id)
        return fork.home

    def _fork_input(self, fork: Fork, history: list[Turn] | None, cache: CacheMode) -> ModelInput:
        ancestors: list[tuple[Fork, list[Turn]]] = []
        inherited: list[Turn] = []
        channel_pruned = False
        child = fork
        while child.mode is Mode.INHERIT and child.fork_point_seq:
            turns = self.turns.turns(child.parent_id, upto_seq=child.fork_point_seq)
            if not child.nested:
                inherited = turns
                channel_pruned = self.sessions.session(child.parent_id).pruned
                break
            child = self.sessions.fork(child.parent_id)
            ancestors.insert(0, (child, turns))
        own = self.turns.turns(fork.id) if history is None else history
        return fork_input(fork, inherited, own, ancestors, channel_pruned, cache)
