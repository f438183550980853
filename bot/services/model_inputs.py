"""A session's model input, read out of the store: the fork pointers are resolved here."""
from __future__ import annotations

from ..domain.caching import CacheMode
from dataclasses import replace

from ..domain.context import ModelInput, asking, fork_input, parent_input
from ..domain.model import Channel, Fork, Mode, Session, Turn
from ..domain.settings import ChannelSettings
from .connections import Connections
from .ports import Store


def model_input(store: Store, session: Session, history: list[Turn] | None = None,
                chosen: ChannelSettings | None = None, connections: Connections | None = None,
                cache: CacheMode = CacheMode.AUTO) -> ModelInput:
    """The input that asks for the session's next answer. `history`: the session's own turns, and
    `chosen`: its channel's settings, when the caller has just read them; `connections`: its MCP
    connectors' (none without); `cache`: how breakpoints' TTLs are chosen (THREADFORK_CACHE_TTL)."""
    if session.fork is None:
        chosen = store.channel_settings.of(session.channel) if chosen is None else chosen
        base = parent_input(store.turns.turns(session.id) if history is None else history, session.pruned, cache)
        connectors = connections.of_channel(chosen) if connections else ()
        asked = replace(asking(base.configured(chosen.instructions, chosen.model, chosen.tools, connectors)),
                        effort=chosen.effort)
        return connections.attach(asked, session.channel) if connections else asked
    # a fork answers at its channel's effort as it is now (effort changes no request's cached bytes)
    effort = (chosen if chosen is not None else store.channel_settings.of(session.fork.home)).effort
    return replace(asking(fork_model_input(store, session.fork, history, connections, cache)), effort=effort)


def fork_model_input(store: Store, fork: Fork, history: list[Turn] | None = None,
                     connections: Connections | None = None, cache: CacheMode = CacheMode.AUTO) -> ModelInput:
    """Up the chain of inheriting forks to the channel: each level's turns up to its child's fork point.
    A fork keeps its channel's instructions, model, tools and connectors as they were at its fork point
    (a snapshot); its connectors' tokens are read now."""
    configured = _fork_input(store, fork, history, cache).configured(fork.instructions, fork.model, fork.tools,
                                                              fork.connectors if connections else ())
    if not connections or not configured.connectors:
        return configured
    return connections.attach(configured, _settings_home(store, fork))


def _settings_home(store: Store, fork: Fork) -> Channel:
    """The channel whose settings (and connectors' tokens) the fork's snapshot came from: its top fork's home
    (for a private fork, the channel it forks, not the DM its thread is in)."""
    while fork.nested:
        fork = store.sessions.fork(fork.parent_id)
    return fork.home


def _fork_input(store: Store, fork: Fork, history: list[Turn] | None, cache: CacheMode) -> ModelInput:
    ancestors: list[tuple[Fork, list[Turn]]] = []
    inherited: list[Turn] = []
    channel_pruned = False
    child = fork
    while child.mode is Mode.INHERIT and child.fork_point_seq:
        turns = store.turns.turns(child.parent_id, upto_seq=child.fork_point_seq)
        if not child.nested:
            inherited = turns
            channel_pruned = store.sessions.session(child.parent_id).pruned
            break
        child = store.sessions.fork(child.parent_id)
        ancestors.insert(0, (child, turns))
    own = store.turns.turns(fork.id) if history is None else history
    return fork_input(fork, inherited, own, ancestors, channel_pruned, cache)
