"""The store contract for memory, on the in-memory store, SQLite and PostgreSQL: entries per channel and per
workspace, personal ones of a private fork, deletes that happen once and for real, sizes for App Home, and
forgetting a channel or a workspace takes its memory with it."""
from datetime import timedelta

from bot.domain.memory import WORKSPACE, workspace_of
from bot.domain.model import Channel, Role, TurnStatus
from bot.domain.settings import ChannelSettings

GENERAL = Channel("T1", "C1")


def test_an_entry_is_kept_with_its_author_source_and_time_and_read_back_in_order(store, clock):
    first = store.memories.add(GENERAL, "the launch is on 14 March", "U1", "Ada", source_fork=3, source_ts="100.1")
    second = store.memories.add(GENERAL, "Bob owns billing", "U2", None)
    assert [e.text for e in store.memories.entries(GENERAL)] == ["the launch is on 14 March", "Bob owns billing"]
    kept = store.memories.entry(first.id)
    assert (kept.author_id, kept.author_name, kept.source_fork, kept.source_ts) == ("U1", "Ada", 3, "100.1")
    assert kept.created_at <= clock() and not kept.pending and kept.owner_id is None
    assert second.id > first.id and store.memories.entries(Channel("T2", "C1")) == []


def test_a_channel_sees_its_own_entries_and_its_workspaces_but_no_other_channels(store):
    store.memories.add(GENERAL, "channel fact", "U1", "Ada")
    store.memories.add(workspace_of("T1"), "workspace fact", "UADMIN", "Admin")
    store.memories.add(Channel("T1", "C2"), "other channel", "U1", "Ada")
    store.memories.add(workspace_of("T2"), "other workspace", "U1", "Ada")
    seen = store.memories.seen_in(GENERAL)
    assert sorted(e.text for e in seen) == ["channel fact", "workspace fact"]
    assert [e.workspace for e in seen if e.text == "workspace fact"] == [True]


def test_an_entry_is_deleted_once_and_its_id_never_names_a_later_one(store):
    entry = store.memories.add(GENERAL, "old", "U1", "Ada")
    assert store.memories.delete(entry.id).text == "old"
    assert store.memories.delete(entry.id) is None and store.memories.entry(entry.id) is None
    later = store.memories.add(GENERAL, "new", "U1", "Ada")
    assert later.id != entry.id


def test_an_entry_is_edited_renamed_kept_and_shared(store):
    entry = store.memories.add(GENERAL, "draft", "U1", "Ada", owner_id="U1", pending=True, path="/memories/a.md")
    assert store.memories.edit(entry.id, text="final") and store.memories.edit(entry.id, path="/memories/b.md")
    assert store.memories.keep(entry.id) and not store.memories.keep(entry.id)
    assert store.memories.share(entry.id) and not store.memories.share(entry.id)
    kept = store.memories.entry(entry.id)
    assert (kept.text, kept.path, kept.pending, kept.owner_id) == ("final", "/memories/b.md", False, None)
    assert not store.memories.edit(entry.id + 1000, text="nobody")


def test_sizes_count_each_channels_shared_memory_for_app_home(store):
    store.memories.add(GENERAL, "x" * 400, "U1", "Ada")
    store.memories.add(GENERAL, "y" * 40, "U1", "Ada", owner_id="U1")  # personal: not the channel's size
    store.memories.add(GENERAL, "z" * 40, "U1", "Ada", pending=True)  # not kept yet
    store.memories.add(workspace_of("T1"), "w" * 80, "U1", "Ada")
    assert store.memories.sizes("T1") == {"C1": 100, WORKSPACE: 20}


def test_forgetting_a_channel_takes_its_memory_and_forgetting_the_workspace_takes_every_entry(store):
    store.memories.add(GENERAL, "the launch is on 14 March", "U1", "Ada")
    store.memories.add(GENERAL, "mine only", "U1", "Ada", owner_id="U1")
    store.memories.add(Channel("T1", "C2"), "stays", "U1", "Ada")
    store.memories.add(workspace_of("T1"), "workspace fact", "U1", "Ada")
    store.memories.add(Channel("T2", "C1"), "another workspace", "U1", "Ada")
    store.erasure.forget_channel(GENERAL)
    assert store.memories.entries(GENERAL) == []
    assert [e.text for e in store.memories.seen_in(Channel("T1", "C2"))] == ["stays", "workspace fact"]
    store.erasure.forget_team("T1")
    assert store.memories.seen_in(Channel("T1", "C2")) == [] and store.memories.sizes("T1") == {}
    assert [e.text for e in store.memories.entries(Channel("T2", "C1"))] == ["another workspace"]


def test_memory_outlives_the_turns_it_came_from_but_not_the_retention_policy_itself(store, clock):
    parent = store.sessions.parent_id(GENERAL)
    store.turns.append_turn(parent, Role.USER, "old words", TurnStatus.ANSWERED, author_id="U1")
    store.memories.add(GENERAL, "too old", "U1", "Ada")
    clock.advance(days=10)
    store.memories.add(GENERAL, "lasting", "U1", "Ada")
    store.erasure.prune(clock() - timedelta(days=5))
    assert store.turns.turns(parent) == []
    assert [e.text for e in store.memories.entries(GENERAL)] == ["lasting"]


def test_a_channels_memory_settings_are_saved_with_its_other_choices(store):
    chosen = ChannelSettings(memory_budget=500, memory_writers="admins", memory_tool="ask")
    store.channel_settings.save(GENERAL, chosen, "UADMIN")
    assert store.channel_settings.of(GENERAL) == chosen
