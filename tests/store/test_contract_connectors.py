"""The store contract for channels' MCP connectors, on the in-memory store, SQLite and PostgreSQL:
connectors are kept in order with the channel's settings, a name that stays keeps its sealed token and
a name that goes takes it along, forgetting the channel or the workspace drops the tokens, and a fork
keeps the connectors in force when it opened (never a token)."""
from bot.domain.connectors import Connector
from bot.domain.model import Channel, Mode
from bot.domain.settings import ChannelSettings

GENERAL = Channel("T1", "C1")
TRACKER = Connector("tracker", "https://mcp.tracker.example/mcp", ("search", "get_issue"))
WIKI = Connector("wiki", "https://wiki.example/mcp")


def test_a_channel_that_never_chose_follows_the_default_connectors_and_one_that_chose_none_has_none(store):
    assert store.channel_settings.of(GENERAL).connectors is None
    store.channel_settings.save(GENERAL, ChannelSettings(connectors=()), "UADMIN01")
    assert store.channel_settings.of(GENERAL).connectors == ()


def test_connectors_are_kept_in_order_and_each_keeps_its_sealed_token_while_its_name_stays(store):
    store.channel_settings.save(GENERAL, ChannelSettings(connectors=(WIKI, TRACKER)), "UADMIN01")
    store.connector_tokens.keep(GENERAL, {"tracker": "gAAAA-sealed-1"})
    assert store.channel_settings.of(GENERAL).connectors == (WIKI, TRACKER)
    assert store.connector_tokens.sealed(GENERAL) == {"tracker": "gAAAA-sealed-1"}
    moved = Connector("tracker", "https://mcp.tracker.example/v2", None)
    store.channel_settings.save(GENERAL, ChannelSettings(connectors=(moved, WIKI)), "UADMIN01")
    assert store.channel_settings.of(GENERAL).connectors == (moved, WIKI)
    assert store.connector_tokens.sealed(GENERAL) == {"tracker": "gAAAA-sealed-1"}
    store.channel_settings.save(GENERAL, ChannelSettings(connectors=(WIKI,)), "UADMIN01")
    assert store.connector_tokens.sealed(GENERAL) == {}  # removed: its token went with it
    store.channel_settings.save(GENERAL, ChannelSettings(connectors=(WIKI, TRACKER)), "UADMIN01")
    assert store.connector_tokens.sealed(GENERAL) == {}  # added again: no token until one is typed


def test_keep_sets_the_named_tokens_and_clears_the_others(store):
    store.channel_settings.save(GENERAL, ChannelSettings(connectors=(WIKI, TRACKER)), "UADMIN01")
    store.connector_tokens.keep(GENERAL, {"tracker": "sealed-a", "wiki": "sealed-b"})
    store.connector_tokens.keep(GENERAL, {"wiki": "sealed-c"})
    assert store.connector_tokens.sealed(GENERAL) == {"wiki": "sealed-c"}
    assert store.connector_tokens.sealed(Channel("T2", "C1")) == {}


def test_forgetting_the_channel_drops_its_tokens_and_forgetting_the_workspace_its_connectors(store):
    other = Channel("T2", "C1")
    for channel in (GENERAL, other):
        store.channel_settings.save(channel, ChannelSettings(connectors=(TRACKER,)), "UADMIN01")
        store.connector_tokens.keep(channel, {"tracker": "sealed"})
    store.erasure.forget_channel(GENERAL)
    assert store.connector_tokens.sealed(GENERAL) == {}
    assert store.channel_settings.of(GENERAL).connectors == (TRACKER,)  # settings stay, without the token
    store.erasure.forget_team("T1")
    assert store.channel_settings.of(GENERAL).connectors is None
    assert store.connector_tokens.sealed(other) == {"tracker": "sealed"}


def test_a_fork_keeps_the_connectors_in_force_when_it_opened_and_its_child_keeps_them_too(store):
    defaults = ChannelSettings(connectors=(WIKI,))
    plain = store.sessions.create_fork(GENERAL, "U1", Mode.INHERIT, "defaults", defaults=defaults)
    assert plain.connectors == (WIKI,)
    store.channel_settings.save(GENERAL, ChannelSettings(connectors=(TRACKER,)), "UADMIN01")
    fork = store.sessions.create_fork(GENERAL, "U1", Mode.INHERIT, "topic", defaults=defaults)
    store.channel_settings.save(GENERAL, ChannelSettings(connectors=()), "UADMIN01")
    child = store.sessions.create_fork(GENERAL, "U1", Mode.INHERIT, "child", parent=store.sessions.fork(fork.id),
                                       defaults=defaults)
    later = store.sessions.create_fork(GENERAL, "U1", Mode.FRESH, "later", defaults=defaults)
    assert store.sessions.fork(fork.id).connectors == (TRACKER,) and child.connectors == (TRACKER,)
    assert later.connectors == ()
    assert store.sessions.fork(plain.id).connectors == (WIKI,)


def test_connector_calls_add_up_per_fork_and_go_with_the_channel_and_the_workspace(store):
    store.connector_use.record(GENERAL, 0, {"tracker": 1})
    store.connector_use.record(GENERAL, 2, {"tracker": 2, "wiki": 1})
    store.connector_use.record(GENERAL, 2, {"tracker": 3})
    store.connector_use.record(Channel("T2", "C1"), 1, {"wiki": 4})
    assert store.connector_use.in_channel(GENERAL) == {0: {"tracker": 1}, 2: {"tracker": 5, "wiki": 1}}
    store.erasure.forget_channel(GENERAL)
    assert store.connector_use.in_channel(GENERAL) == {}
    store.erasure.forget_team("T2")
    assert store.connector_use.in_channel(Channel("T2", "C1")) == {}
