"""Where memory goes in a request (bot/services/model_inputs.py), over the in-memory store: the channel's
conversation carries it all in its system content; a fork carries what was saved before it opened, and what was
saved since as a note before its newest message — until its next compaction folds it into the prefix."""
from bot.domain.memory import workspace_of
from bot.domain.model import Channel, Mode, Role, Session, TurnStatus, Usage
from bot.services.model_inputs import ModelInputs

from ..fakes.clock import FakeClock
from ..fakes.memory import memory_store

GENERAL = Channel("T1", "C1")


def setup():
    clock = FakeClock()
    store = memory_store(clock)
    inputs = ModelInputs(sessions=store.sessions, turns=store.turns, channel_settings=store.channel_settings,
                         memories=store.memories)
    return clock, store, inputs


def ask(store, session_id, text="what now?"):
    store.turns.append_turn(session_id, Role.USER, text, TurnStatus.PENDING, author_id="U1")


def test_the_channels_conversation_carries_its_memory_and_its_workspaces_in_its_system_content():
    clock, store, inputs = setup()
    parent = store.sessions.parent_id(GENERAL)
    ask(store, parent)
    store.memories.add(GENERAL, "the launch is on 14 March", "U1", "Ada")
    store.memories.add(workspace_of("T1"), "the fiscal year starts in April", "U9", "Admin")
    system = inputs.of_session(Session(parent, GENERAL.id, GENERAL.team_id)).system
    assert "the launch is on 14 March" in system and "the fiscal year starts in April" in system
    assert system.index("fiscal year") < system.index("launch")  # the workspace's first


def test_a_running_fork_hears_later_memory_in_a_note_until_its_compaction_folds_it_into_the_prefix():
    clock, store, inputs = setup()
    store.memories.add(GENERAL, "before the fork", "U1", "Ada")
    clock.advance(seconds=5)
    fork = store.sessions.create_fork(GENERAL, "U1", Mode.INHERIT, "topic")
    session = Session(fork.id, fork.channel_id, fork.team_id, fork)
    ask(store, fork.id)
    clock.advance(seconds=5)
    store.memories.add(GENERAL, "after the fork opened", "U2", "Bo")
    asked = inputs.of_session(session)
    assert "before the fork" in asked.system and "after the fork opened" not in asked.system
    assert "after the fork opened" in asked.blocks[-2].text and asked.blocks[-1].text.endswith("what now?")
    clock.advance(seconds=5)
    store.turns.append_turn(fork.id, Role.COMPACTION, "the story so far", TurnStatus.COMPLETE, covers_seq=1)
    ask(store, fork.id, "and now?")
    folded = inputs.of_session(session)
    assert "after the fork opened" in folded.system
    assert not any("after the fork opened" in b.text for b in folded.blocks)


def test_a_private_forks_owner_sees_their_own_entries_and_nobody_else_does():
    clock, store, inputs = setup()
    parent = store.sessions.parent_id(GENERAL)
    ask(store, parent)
    store.memories.add(GENERAL, "mine alone", "U1", "Ada", owner_id="U1")
    assert "mine alone" not in inputs.of_session(Session(parent, GENERAL.id, GENERAL.team_id)).system


def test_on_a_model_that_takes_system_messages_the_conversation_keeps_its_prefix_until_its_compaction():
    clock, store, _ = setup()
    inputs = ModelInputs(sessions=store.sessions, turns=store.turns, channel_settings=store.channel_settings,
                         memories=store.memories, default_model="claude-opus-4-8")
    parent = store.sessions.parent_id(GENERAL)
    session = Session(parent, GENERAL.id, GENERAL.team_id)
    store.memories.add(GENERAL, "before it began", "U1", "Ada")
    clock.advance(seconds=5)
    ask(store, parent)
    clock.advance(seconds=5)
    store.memories.add(GENERAL, "saved while it ran", "U2", "Bo")
    asked = inputs.of_session(session)
    assert "before it began" in asked.system and "saved while it ran" not in asked.system
    assert "saved while it ran" in asked.late_system and asked.messages()[-1]["role"] == "system"
    other = ModelInputs(sessions=store.sessions, turns=store.turns, channel_settings=store.channel_settings,
                        memories=store.memories, default_model="claude-sonnet-5-5")
    assert "saved while it ran" in other.of_session(session).system  # elsewhere: all in the system, as it is now
    assert not other.of_session(session).late_system
    clock.advance(seconds=5)
    store.turns.append_turn(parent, Role.COMPACTION, "the story so far", TurnStatus.COMPLETE, covers_seq=1)
    ask(store, parent, "and now?")
    folded = inputs.of_session(session)
    assert "saved while it ran" in folded.system and not folded.late_system
