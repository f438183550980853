"""The store contract, continued: what the sweep finds, and the read-only figures (on the in-memory
store, SQLite and PostgreSQL alike)."""
from datetime import timedelta

from bot.domain.model import Channel, ContextSize, ForkStatus, Mode, Role, TurnStatus, Usage
from ..merges import begin_merge
from bot.app import made
from bot.services.queue import Queue
from .use_cases import merge_in


def submit(store, session_id, text, owner):
    return made(Queue, store).submit(session_id, text, author_id="U1", author_name="Ann", slack_ts=None,
                                   channel=None, claim=None, owner=owner, lease_seconds=60)


def test_idle_forks_are_found_until_reminded_and_activity_makes_them_young_again(store, clock):
    old = store.sessions.create_fork(Channel("T1", "C1"), "U1", Mode.FRESH, "")
    clock.advance(hours=2)
    young = store.sessions.create_fork(Channel("T1", "C1"), "U1", Mode.FRESH, "")
    hour_ago = clock() - timedelta(hours=1)
    assert [f.id for f in store.upkeep.idle_forks(hour_ago, unreminded=True)] == [old.id]
    assert store.upkeep.claim_reminder(old.id, hour_ago)
    assert store.upkeep.idle_forks(hour_ago, unreminded=True) == []
    assert [f.id for f in store.upkeep.idle_forks(hour_ago)] == [old.id]
    submit(store, old.id, "back again", "A")
    assert store.upkeep.idle_forks(hour_ago) == [] and young.status is ForkStatus.OPEN


def test_an_idle_only_merge_or_abandon_spares_a_fork_that_became_active(store, clock):
    fork = store.sessions.create_fork(Channel("T1", "C1"), "U1", Mode.FRESH, "")
    clock.advance(hours=2)
    cutoff = clock() - timedelta(hours=1)
    submit(store, fork.id, "still here", "A")
    assert begin_merge(store, fork.id, "expiry", "worker", 60, idle_before=cutoff) is False
    assert store.merges.abandon(fork.id, idle_before=cutoff) is False
    assert store.sessions.fork(fork.id).status is ForkStatus.OPEN


def test_a_merged_fork_not_yet_announced_is_stuck_until_its_summary_is_posted(store, clock):
    fork = store.sessions.create_fork(Channel("T1", "C1"), "U1", Mode.FRESH, "")
    begin_merge(store, fork.id, "U1", "worker", 60)
    merge_in(store, store.sessions.fork(fork.id), "[Merged]", "summary", Usage(1, 2))
    clock.advance(seconds=61)
    assert [f.id for f in store.merges.stuck_merges()] == [fork.id]
    store.merges.set_summary_ts(fork.id, "9.9")
    assert store.merges.stuck_merges() == [] and store.sessions.fork(fork.id).summary_ts == "9.9"


def test_a_session_with_an_unanswered_or_cut_off_turn_and_no_live_lease_is_stalled(store, clock):
    parent = store.sessions.parent_id(Channel("T1", "C1"))
    batch = submit(store, parent, "question", "A").batch
    assert store.upkeep.stalled_sessions(clock()) == []  # its lease is alive
    clock.advance(seconds=61)
    assert store.upkeep.stalled_sessions(clock()) == [parent]
    assert store.upkeep.interrupt_streaming(parent) == 1
    assert [t.status for t in store.turns.turns(parent)] == [TurnStatus.PENDING, TurnStatus.ABORTED]
    assert batch.reply.seq == 2


def test_a_session_over_the_budget_is_due_for_compaction_until_compacted(store):
    parent = store.sessions.parent_id(Channel("T1", "C1"))
    batch = submit(store, parent, "question", "A").batch
    made(Queue, store).record(batch.reply, batch.pending, "answer", Usage(900, 200), [], None, "A", 60)
    assert store.upkeep.sessions_over(1_000) == [parent] and store.upkeep.sessions_over(2_000) == []
    compaction = store.turns.append_turn(parent, Role.COMPACTION, "the gist", TurnStatus.COMPLETE, usage=Usage(1_100, 50),
                                         covers_seq=2)
    assert (compaction.role, compaction.covers_seq, compaction.seq) == (Role.COMPACTION, 2, 3)
    assert store.upkeep.sessions_over(1_000) == []
    # one turn stands for the two; tokens are what the API last reported until the next answer reports anew
    assert store.views.context_size(parent) == ContextSize(turns=1, tokens=1_100)


def test_stats_and_context_size_count_what_the_model_sees(store):
    parent = store.sessions.parent_id(Channel("T1", "C1"))
    store.turns.append_turn(parent, Role.USER, "x" * 400, TurnStatus.ANSWERED, author_id="U1")
    store.turns.append_turn(parent, Role.ASSISTANT, "y" * 40, TurnStatus.COMPLETE, usage=Usage(300, 10, 50, 0))
    store.turns.append_turn(parent, Role.ASSISTANT, "cut off", TurnStatus.ABORTED, usage=Usage(999, 9))
    store.turns.append_turn(parent, Role.USER, "z" * 80, TurnStatus.PENDING, author_id="U1")
    assert store.views.context_size(parent) == ContextSize(turns=3, tokens=360 + 20)
    assert store.views.context_size(parent, upto_seq=1) == ContextSize(turns=1, tokens=100)
    fork = store.sessions.create_fork(Channel("T1", "C1"), "U1", Mode.INHERIT, "")
    store.turns.append_turn(fork.id, Role.USER, "q", TurnStatus.ANSWERED, author_id="U1")
    store.turns.append_turn(fork.id, Role.ASSISTANT, "a", TurnStatus.COMPLETE, usage=Usage(1_000, 100))
    stats = store.views.stats(fork.id)
    assert (stats.turns, stats.burned, stats.summary_tokens) == (2, Usage(1_000, 100), 0)


def test_the_economy_sets_what_forks_burned_against_what_their_summaries_returned_where_one_took_part(store):
    for channel, burned, summary in (("C1", 5_000, 300), ("C2", 1_000, 0), ("DSECRET", 7_000, 0)):
        owner = "U2" if channel == "DSECRET" else "U1"
        fork = store.sessions.create_fork(Channel("T1", channel), owner, Mode.FRESH, "")
        store.turns.append_turn(fork.id, Role.ASSISTANT, "a", TurnStatus.COMPLETE, usage=Usage(burned, 0))
        if summary:
            begin_merge(store, fork.id, "U1", "worker", 60)
            merge_in(store, store.sessions.fork(fork.id), "[Merged]", "s", Usage(0, summary))
    economy = {e.channel_id: (e.burned, e.returned) for e in store.views.economy("T1", "U1")}
    assert economy == {"C1": (5_000, 300), "C2": (1_000, 0)}
    assert {e.channel_id for e in store.views.economy("T1", "U2")} == {"DSECRET"}
    parent = store.sessions.parent_id(Channel("T1", "C2"))
    store.turns.append_turn(parent, Role.USER, "hi", TurnStatus.ANSWERED, author_id="U3")
    assert {e.channel_id for e in store.views.economy("T1", "U3")} == {"C2"}  # a parent turn is taking part
