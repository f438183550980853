"""The store contract for real deletes — forgetting a channel or a workspace, and the retention policy —
on the in-memory store, SQLite and PostgreSQL alike; then, on SQLite and PostgreSQL, what another
process sharing the database notices."""
from datetime import timedelta

from sqlalchemy import func, select

from bot.domain.model import Attachment, Channel, ContextSize, FileKind, ForkStatus, Mode, Role, TurnStatus, Usage
from bot.services.ports import StoredFile
from bot.store import open_store
from bot.store.tables import attachments, feedback, messages, sessions, turns

from .test_contract import race
from ..merges import begin_merge
from bot.app import made
from bot.services.queue import Queue
from .use_cases import merge_in

HERE, ELSEWHERE, OTHER_TEAM = Channel("T1", "C1"), Channel("T1", "C2"), Channel("T2", "C1")
NOTES = StoredFile("ab" * 32, FileKind.TEXT, "text/plain", 5, text="notes")
SHARED = Attachment(FileKind.TEXT, "notes.txt", "text/plain", "F1", NOTES.sha256, text="notes")


def say(store, session_id, text, ts=None, channel=None, role=Role.USER):
    status = TurnStatus.ANSWERED if role is Role.USER else TurnStatus.COMPLETE
    return store.turns.append_turn(session_id, role, text, status, author_id="U1", author_name="Ann",
                                   slack_ts=ts, channel=channel)


def talk(store, channel, ts):
    """A channel conversation with a file, a fork, a fork of that fork, a merged fork, feedback."""
    parent = store.sessions.parent_id(channel)
    store.files.keep(NOTES)
    batch = made(Queue, store).submit(parent, "read this", author_id="U1", author_name="Ann", slack_ts=f"{ts}.1",
                                    channel=channel, claim=None, owner="A", lease_seconds=60,
                                    attachments=[SHARED]).batch
    made(Queue, store).record(batch.reply, batch.pending, "answer", Usage(), [f"{ts}.2"], channel, "A", 60)
    fork = store.sessions.create_fork(channel, "U1", Mode.INHERIT, "idea")
    store.sessions.set_root(fork.id, f"{ts}.3", ContextSize(2, 10))
    say(store, fork.id, "in the fork", f"{ts}.4", channel)
    child = store.sessions.create_fork(channel, "U1", Mode.INHERIT, "deeper", parent=store.sessions.fork(fork.id))
    say(store, child.id, "in the child", f"{ts}.5", channel)
    merged = store.sessions.create_fork(channel, "U1", Mode.FRESH, "done")
    say(store, merged.id, "quick one", f"{ts}.6", channel)
    begin_merge(store, merged.id, "U1", "A", 60)
    merge_in(store, store.sessions.fork(merged.id), "[Merged fork]", "summary", Usage(1, 2))
    store.feedback.record(channel, f"{ts}.2", "U2", "good")
    return parent, [fork.id, child.id, merged.id]


def test_forgetting_a_channel_deletes_its_parent_forks_of_any_depth_turns_files_index_and_feedback(store):
    parent, forks = talk(store, HERE, "100")
    talk(store, ELSEWHERE, "200")
    talk(store, OTHER_TEAM, "100")

    assert store.erasure.forget_channel(HERE) == 4

    assert all(store.sessions.fork(f) is None for f in forks)
    assert store.turns.turns(parent) == [] and store.turns.turns(forks[0]) == []
    assert store.sessions.fork_by_message(HERE, "100.3") is None
    assert store.sessions.forks_in(HERE, ForkStatus.OPEN) == [] and store.sessions.fork_counts(HERE) == {}
    assert store.feedback.record(HERE, "100.2", "U2", "good")  # the earlier press is gone
    fresh = store.sessions.parent_id(HERE)
    assert fresh != parent and store.turns.turns(fresh) == []
    for kept in (ELSEWHERE, OTHER_TEAM):
        assert [t.text for t in store.turns.turns(store.sessions.parent_id(kept))] == \
            ["read this", "answer", "[Merged fork]"]
        assert store.sessions.fork_by_message(kept, f"{'200' if kept is ELSEWHERE else '100'}.3") is not None
    assert store.files.known_shared("F1") is not None  # other channels still share that file


def test_a_forgotten_channels_fork_numbers_continue_so_an_old_number_never_names_a_new_fork(store):
    talk(store, HERE, "100")
    store.erasure.forget_channel(HERE)
    assert store.sessions.create_fork(HERE, "U1", Mode.FRESH, "").number == 4
    assert store.erasure.forget_channel(Channel("T1", "never-used")) == 0


def test_the_forgotten_channel_starts_afresh_and_works_as_before(store):
    talk(store, HERE, "100")
    store.erasure.forget_channel(HERE)
    parent = store.sessions.parent_id(HERE)
    batch = made(Queue, store).submit(parent, "hello again", author_id="U1", author_name="Ann", slack_ts="300.1",
                                    channel=HERE, claim=None, owner="A", lease_seconds=60).batch
    assert [t.text for t in batch.history] == ["hello again", ""]
    assert store.sessions.session(parent).pruned_before_seq == 0


def test_forgetting_a_workspace_deletes_every_channel_of_it_and_nothing_of_another(store):
    talk(store, HERE, "100")
    talk(store, ELSEWHERE, "200")
    talk(store, OTHER_TEAM, "100")

    assert store.erasure.forget_team("T1") == 8

    for gone in (HERE, ELSEWHERE):
        assert store.turns.turns(store.sessions.parent_id(gone)) == []
        assert store.sessions.fork_counts(gone) == {}
    assert store.sessions.create_fork(HERE, "U1", Mode.FRESH, "").number == 1  # nothing of it stays
    assert len(store.turns.turns(store.sessions.parent_id(OTHER_TEAM))) == 3
    assert store.sessions.fork_counts(OTHER_TEAM) == {ForkStatus.OPEN: 2, ForkStatus.MERGED: 1}
    assert not store.feedback.record(OTHER_TEAM, "100.2", "U2", "good")


def test_pruning_removes_the_oldest_turns_of_each_session_and_records_where_they_stopped(store, clock):
    parent = store.sessions.parent_id(HERE)
    say(store, parent, "old question")
    say(store, parent, "old answer", role=Role.ASSISTANT)
    clock.advance(days=2)
    cutoff = clock()
    say(store, parent, "new question")
    say(store, parent, "new answer", role=Role.ASSISTANT)

    assert store.erasure.prune(cutoff) == 2

    assert [(t.seq, t.text) for t in store.turns.turns(parent)] == [(3, "new question"), (4, "new answer")]
    assert store.sessions.session(parent).pruned_before_seq == 3
    assert store.erasure.prune(cutoff) == 0  # nothing older is left
    assert say(store, parent, "still talking").seq == 5


def test_pruning_deletes_forks_closed_and_quiet_before_then_and_keeps_open_and_recent_ones(store, clock):
    parent = store.sessions.parent_id(HERE)
    say(store, parent, "before the forks")
    merged = store.sessions.create_fork(HERE, "U1", Mode.INHERIT, "merged long ago")
    say(store, merged.id, "talk")
    begin_merge(store, merged.id, "U1", "A", 60)
    merge_in(store, store.sessions.fork(merged.id), "[Merged fork #1]", "summary", Usage())
    abandoned = store.sessions.create_fork(HERE, "U1", Mode.FRESH, "abandoned long ago")
    say(store, abandoned.id, "talk")
    store.merges.abandon(abandoned.id)
    quiet_open = store.sessions.create_fork(HERE, "U1", Mode.FRESH, "open but quiet")
    say(store, quiet_open.id, "talk")
    clock.advance(days=2)
    cutoff = clock()
    recent = store.sessions.create_fork(HERE, "U1", Mode.FRESH, "closed recently")
    say(store, recent.id, "talk")
    store.merges.abandon(recent.id)

    assert store.erasure.prune(cutoff) == 5  # a turn of each closed fork and of the open one, 2 of the parent

    assert store.sessions.fork(merged.id) is None and store.sessions.fork(abandoned.id) is None
    assert store.sessions.fork(quiet_open.id).status is ForkStatus.OPEN
    assert store.turns.turns(quiet_open.id) == [] and store.sessions.fork(quiet_open.id).pruned_before_seq == 2
    assert store.sessions.fork(recent.id).status is ForkStatus.ABANDONED and len(store.turns.turns(recent.id)) == 1
    assert store.turns.turns(parent) == [] and store.merges.summaries_since(parent, 0) == []


def test_a_fork_closed_long_ago_stays_while_a_fork_of_it_that_stays_reads_its_turns(store, clock):
    above = store.sessions.create_fork(HERE, "U1", Mode.FRESH, "above")
    say(store, above.id, "talk")
    child = store.sessions.create_fork(HERE, "U1", Mode.INHERIT, "below", parent=store.sessions.fork(above.id))
    store.merges.abandon(above.id)
    clock.advance(days=2)
    cutoff = clock()
    say(store, child.id, "still going")
    store.erasure.prune(cutoff)
    assert store.sessions.fork(above.id) is not None and store.sessions.fork(child.id) is not None
    assert store.turns.turns(child.id)[0].text == "still going"


def test_a_deleted_session_reads_as_empty_and_its_id_is_never_given_again(store):
    parent, forks = talk(store, HERE, "100")
    store.erasure.forget_team("T1")
    assert store.turns.turns(forks[-1]) == [] and store.turns.turns(parent) == []
    assert store.sessions.parent_id(HERE) > max(forks)  # an old fork's Merge button finds nothing


def test_sweepers_pruning_at_once_delete_each_turn_once(store, clock):
    forks = [store.sessions.create_fork(Channel("T1", f"C{n}"), "U1", Mode.FRESH, "") for n in range(6)]
    for fork in forks:
        say(store, fork.id, "old")
        say(store, fork.id, "old too", role=Role.ASSISTANT)
    for fork in forks[:3]:
        store.merges.abandon(fork.id)
    clock.advance(days=1)
    cutoff = clock()
    assert sum(race(4, lambda: store.erasure.prune(cutoff))) == 12
    assert [store.sessions.fork(f.id) is None for f in forks] == [True] * 3 + [False] * 3


def count(conn, table, *where):
    return conn.scalar(select(func.count()).select_from(table).where(*where))


def test_the_rows_are_really_deleted_not_flagged(database_url):
    db, store = open_store(database_url)
    db.create_schema()
    talk(store, HERE, "100")
    store.erasure.forget_channel(HERE)
    with db.engine.connect() as conn:
        assert count(conn, sessions, sessions.c.channel_id == "C1", sessions.c.kind == "fork") == 0
        assert count(conn, turns) == count(conn, attachments) == count(conn, messages) == count(conn, feedback) == 0
        assert count(conn, sessions) == 1  # the fresh parent carrying the fork numbering, with nothing in it
    db.engine.dispose()


def test_a_replica_never_serves_what_another_replica_pruned_or_forgot(database_url):
    first_db, first = open_store(database_url)
    first_db.create_schema()
    second_db, second = open_store(database_url, first_db.clock)
    parent = first.sessions.parent_id(HERE)
    old = [say(first, parent, "old question"), say(first, parent, "old answer", role=Role.ASSISTANT)]
    cutoff = first_db.now()
    say(first, parent, "new question")
    assert first.turns.turns(parent)[:2] == old  # settled: cached by the first replica as these objects

    second.erasure.prune(cutoff)
    assert [t.text for t in first.turns.turns(parent)] == ["new question"]

    second.erasure.forget_channel(HERE)
    assert first.turns.turns(parent) == []
    fresh = first.sessions.parent_id(HERE)
    assert fresh != parent and first.turns.turns(fresh) == []
    assert say(first, fresh, "hello").seq == 1
    first_db.engine.dispose()
    second_db.engine.dispose()


def test_contents_no_turn_shares_any_more_are_dropped_once_and_the_providers_ids_returned(store, clock):
    uploaded = StoredFile("cd" * 32, FileKind.IMAGE, "image/png", 9, file_id="file_up1")
    picture = Attachment(FileKind.IMAGE, "a.png", "image/png", "F2", uploaded.sha256, "file_up1")
    talk(store, HERE, "100")
    store.files.keep(uploaded)
    parent = store.sessions.parent_id(ELSEWHERE)
    made(Queue, store).submit(parent, "look", author_id="U1", author_name="Ann", slack_ts="200.1", channel=ELSEWHERE,
                            claim=None, owner="B", lease_seconds=60, attachments=[picture])
    clock.advance(minutes=20)
    assert store.erasure.drop_unused_files(clock()) == []  # both still shared
    store.erasure.forget_channel(HERE)
    store.erasure.forget_channel(ELSEWHERE)
    fresh = StoredFile("ef" * 32, FileKind.TEXT, "text/plain", 3, text="new")
    store.files.keep(fresh)  # kept just now, maybe about to be attached
    assert sorted(race(4, lambda: tuple(store.erasure.drop_unused_files(clock() - timedelta(minutes=10))))) == \
        [()] * 3 + [("file_up1",)]
    assert store.files.known(NOTES.sha256) is None and store.files.known(uploaded.sha256) is None
    assert store.files.known(fresh.sha256) == fresh


def test_a_draft_under_review_goes_with_the_turns_it_summarises(store, clock):
    fork = store.sessions.create_fork(HERE, "U1", Mode.FRESH, "idea")
    say(store, fork.id, "an old thought")
    number = store.reviews.begin_draft(fork.id, 0, "owner", 60)
    store.reviews.record_draft(fork.id, number, "a summary of the old thought", 1, Usage(), "U1", "owner")
    clock.advance(days=40)
    say(store, fork.id, "a new thought")
    assert store.erasure.prune(clock() - timedelta(days=30)) == 1
    assert store.sessions.fork(fork.id).draft is None and store.sessions.fork(fork.id).status is ForkStatus.OPEN


def test_the_retention_takes_the_topics_of_forks_opened_before_its_cut_off_and_leaves_newer_ones(store, clock):
    old = store.sessions.create_fork(HERE, "U1", Mode.INHERIT, "an old secret plan")
    say(store, old.id, "an old secret plan", "1.1", HERE)
    clock.advance(days=4)
    new = store.sessions.create_fork(HERE, "U1", Mode.INHERIT, "a new plan")
    store.erasure.prune(clock() - timedelta(days=3))
    assert store.sessions.fork(old.id).topic == "" and store.sessions.fork(old.id).status is ForkStatus.OPEN
    assert store.sessions.fork(new.id).topic == "a new plan"
