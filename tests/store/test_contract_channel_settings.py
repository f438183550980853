"""The store contract for channel settings, on the in-memory store, SQLite and PostgreSQL: a save
replaces the channel's choices, each workspace's channel is its own, and a fork keeps the
instructions, model, tools and effort in force when it opened (a fork of a fork, its parent fork's)."""
from bot.domain.model import Channel, Mode
from bot.domain.settings import ChannelSettings

GENERAL = Channel("T1", "C1")


def test_a_channel_without_choices_follows_every_default(store):
    assert store.channel_settings.of(GENERAL) == ChannelSettings()
    assert store.channel_settings.shortest() == (None, None)


def test_a_save_replaces_the_channels_choices_and_other_workspaces_keep_theirs(store):
    chosen = ChannelSettings(instructions="Be terse.", model="claude-haiku-5-5", fork_token_budget=5000,
                             merge_policy="owner", enabled=False, idle_reminder=3600.0, expiry=86400.0,
                             tools=("web_search",), merge_review=True)
    store.channel_settings.save(GENERAL, chosen, "UADMIN01")
    assert store.channel_settings.of(GENERAL) == chosen
    assert store.channel_settings.of(Channel("T2", "C1")) == ChannelSettings()
    store.channel_settings.save(GENERAL, ChannelSettings(tools=()), "UADMIN01")
    assert store.channel_settings.of(GENERAL) == ChannelSettings(tools=())
    store.channel_settings.save(Channel("T2", "C1"), ChannelSettings(idle_reminder=60.0, expiry=600.0), "U2")
    assert store.channel_settings.shortest() == (60.0, 600.0)


def test_a_fork_keeps_the_instructions_model_tools_and_effort_in_force_when_it_opened(store):
    store.channel_settings.save(GENERAL, ChannelSettings(instructions="old rules", model="m-old", tools=(),
                                                         effort="high"), "U9")
    fork = store.sessions.create_fork(GENERAL, "U1", Mode.INHERIT, "topic")
    assert (fork.model, fork.tools, fork.effort) == ("m-old", (), "high")
    store.channel_settings.save(GENERAL, ChannelSettings(instructions="new rules", tools=("web_search",),
                                                         effort="low"), "U9")
    child = store.sessions.create_fork(GENERAL, "U1", Mode.INHERIT, "child", parent=store.sessions.fork(fork.id))
    later = store.sessions.create_fork(GENERAL, "U1", Mode.FRESH, "later")
    assert store.sessions.fork(fork.id).instructions == "old rules"
    assert child.instructions == "old rules" and later.instructions == "new rules"
    assert (child.model, child.tools) == ("m-old", ()) and (later.model, later.tools) == (None, ("web_search",))
    assert (store.sessions.fork(fork.id).effort, child.effort, later.effort) == ("high", "high", "low")
    adopted = store.adoptions.adopt_thread(GENERAL, "100.5", "U1", "holder", 60).fork
    assert (adopted.instructions, adopted.effort) == ("new rules", "low")


def test_forgetting_a_channel_keeps_its_settings_and_forgetting_the_workspace_does_not(store):
    chosen = ChannelSettings(instructions="Be terse.", enabled=False)
    store.channel_settings.save(GENERAL, chosen, "UADMIN01")
    store.channel_settings.save(Channel("T2", "C1"), chosen, "UADMIN02")
    store.erasure.forget_channel(GENERAL)
    assert store.channel_settings.of(GENERAL) == chosen
    store.erasure.forget_team("T1")
    assert store.channel_settings.of(GENERAL) == ChannelSettings()
    assert store.channel_settings.of(Channel("T2", "C1")) == chosen


def test_the_read_an_acknowledgement_waits_for_finds_what_a_save_wrote(store):
    assert store.channel_settings.of_at_the_door(GENERAL) == ChannelSettings()
    chosen = ChannelSettings(instructions="Be terse.", enabled=False, tools=("web_search",))
    store.channel_settings.save(GENERAL, chosen, "UADMIN01")
    assert store.channel_settings.of_at_the_door(GENERAL) == chosen == store.channel_settings.of(GENERAL)
