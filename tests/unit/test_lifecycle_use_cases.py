"""The sweep's rules on the in-memory store and a fake clock: reminders, expiry, recovery, compaction."""
from bot.domain.model import ForkStatus, Role, Usage
from bot.services.ports import MAX_ATTEMPTS

from ..fakes.ports import Answer
from .conftest import UseCases
from ..merges import begin_merge
from bot.app import made
from bot.services.queue import Queue


def test_an_idle_fork_is_reminded_once_and_expired_by_merging_it(cases):
    fork = cases.open_fork("idle topic")
    cases.clock.advance(hours=23)
    cases.services.sweep()
    assert cases.chat.of("remind") == []
    cases.clock.advance(hours=2)
    cases.services.sweep()
    cases.services.sweep()
    assert len(cases.chat.of("remind")) == 1
    cases.clock.advance(days=7)
    cases.services.sweep()
    assert cases.fork().status is ForkStatus.MERGED and len(cases.chat.of("post_merge")) == 1
    assert "Merged automatically after sitting idle" in cases.chat.of("note_in_thread")[-1].text
    assert fork.id == cases.fork().id


def test_under_the_abandon_policy_an_idle_fork_closes_without_a_model_call():
    cases = UseCases(expiry_policy="abandon")
    cases.open_fork("--fresh")
    cases.clock.advance(days=8)
    cases.services.sweep()
    assert cases.fork().status is ForkStatus.ABANDONED and cases.model.inputs == []


def test_an_idle_fork_nobody_wrote_in_is_abandoned_at_expiry_instead_of_retried(cases):
    cases.open_fork("--fresh")
    cases.clock.advance(days=8)
    cases.services.sweep()
    assert cases.fork().status is ForkStatus.ABANDONED and cases.model.inputs == []


def test_a_fork_that_became_active_again_is_not_expired(cases):
    fork = cases.open_fork("topic")
    cases.clock.advance(days=6, hours=23)
    cases.say("UBOB0001", "still on it", thread_ts=fork.root_ts)
    cases.clock.advance(hours=2)
    cases.services.sweep()
    assert cases.fork().status is ForkStatus.OPEN


def test_a_turn_left_pending_by_a_dead_worker_is_answered_by_the_sweep(cases):
    parent = cases.parent()
    made(Queue, cases.store).submit(parent, "orphaned", author_id="UALICE01", author_name="alice", slack_ts="5.1",
                                  channel=None, claim=None, owner="a dead worker", lease_seconds=60)
    cases.clock.advance(seconds=61)
    cases.services.sweep()
    assert "interrupted" in cases.chat.of("post_notice")[0].text
    assert cases.turns(parent) == [("user", "answered", "orphaned"), ("assistant", "aborted", ""),
                                   ("assistant", "complete", "Answer 1")]


def test_a_session_past_its_budget_is_compacted_after_the_answer_keeping_recent_turns():
    cases = UseCases(compact_at=1_000)
    cases.model.answer(*[Answer(f"answer {n}", usage=Usage(300 + 200 * n, 20)) for n in range(5)],
                       Answer("THE GIST: Friday release; Bob said “no weekend work”."))
    for n in range(5):  # the fifth answer reports 1,120 tokens: past the budget
        cases.say("UALICE01", f"question {n} " + "words " * 50, mention=True)
    [compaction] = [t for t in cases.store.turns.turns(cases.parent()) if t.role is Role.COMPACTION]
    assert compaction.text.startswith("THE GIST") and 0 < compaction.covers_seq < compaction.seq - 1
    assert "[Compaction request]" in cases.model.texts()[-1]
    cases.say("UALICE01", "and now?", mention=True)
    latest = cases.model.texts()
    assert latest[0].startswith("[Summary of the earlier conversation") and "THE GIST" in latest[0]
    assert latest[-1].endswith("and now?") and not any("question 0" in t for t in latest)
    assert any("question 4" in t for t in latest)  # the recent tail stays verbatim


def test_retrying_a_failed_turn_answers_it_once(cases):
    cases.model.answer(Answer(error="Claude is overloaded"))
    ts = cases.say("UALICE01", "try me", mention=True)
    assert "overloaded" in cases.chat.of("reply_failed")[0].text
    cases.react("UALICE01", ts, "repeat")
    cases.react("UALICE01", ts, "repeat")
    assert cases.turns(cases.parent())[-1] == ("assistant", "complete", "Answer 2")
    assert len(cases.model.inputs) == 2


def test_a_turn_whose_answer_never_gets_recorded_is_given_up_after_three_attempts_with_one_notice(cases):
    parent = cases.parent()
    made(Queue, cases.store).submit(parent, "poison", author_id="UALICE01", author_name="alice", slack_ts="5.1",
                                  channel=None, claim=None, owner="a dead worker", lease_seconds=30)
    for _ in range(MAX_ATTEMPTS - 1):  # each worker dies before recording (its lease is never renewed)
        cases.clock.advance(seconds=31)
        session = cases.store.sessions.session(parent)
        worker = cases.services.liveness.new_owner()
        cases.store.upkeep.interrupt_streaming(parent)
        if cases.store.leases.lease(parent, worker, 30):
            made(Queue, cases.store).next(parent, worker, 30)
    cases.clock.advance(seconds=31)
    cases.services.sweep()
    assert cases.turns(parent)[0] == ("user", "failed", "poison")
    [notice] = cases.chat.told("UALICE01")
    assert "tried 3 times" in notice and session.fork is None
    cases.services.sweep()
    assert len(cases.chat.told("UALICE01")) == 1 and cases.model.inputs == []


def test_a_merge_taken_over_three_times_reopens_the_fork_with_a_notice(cases):
    fork = cases.open_fork("stubborn")
    begin_merge(cases.store, fork.id, "UALICE01", "a dead merger", 30)
    for n in range(MAX_ATTEMPTS - 1):  # two takeovers, each dying in turn
        cases.clock.advance(seconds=31)
        cases.store.merges.take_merge(fork.id, f"dead sweeper {n}", 30)
    cases.clock.advance(seconds=31)
    cases.services.sweep()
    assert cases.fork().status is ForkStatus.OPEN
    assert "tried 3 times to merge" in cases.chat.of("note_in_thread")[-1].text
    cases.react("UALICE01", fork.root_ts)
    assert cases.fork().status is ForkStatus.MERGED  # mergeable again


def test_a_holder_whose_lease_was_taken_over_does_not_record_its_late_answer(cases):
    parent = cases.parent()
    submitted = made(Queue, cases.store).submit(parent, "slow one", author_id="UALICE01", author_name="alice",
                                              slack_ts="6.1", channel=None, claim=None, owner="slow worker",
                                              lease_seconds=30)
    cases.clock.advance(seconds=31)
    cases.services.sweep()  # taken over and answered
    batch = submitted.batch
    late = made(Queue, cases.store).record(batch.reply, batch.pending, "late", Usage(1, 1), [], None,
                                          "slow worker", 30)
    assert late is None and [t[2] for t in cases.turns(parent)] == ["slow one", "", "Answer 1"]


def test_with_a_retention_policy_the_sweep_deletes_old_turns_and_the_parent_goes_on_with_a_note():
    cases = UseCases(retention=3 * 86400.0)
    cases.say("UALICE01", "an old question", mention=True)
    cases.clock.advance(days=2)
    cases.say("UALICE01", "a newer question", mention=True)
    cases.clock.advance(days=2)
    cases.services.sweep()
    cases.say("UALICE01", "and now?", mention=True)
    texts = cases.model.texts()
    assert texts[0] == "[Earlier turns of this conversation were removed under the workspace's retention policy.]"
    assert not any("an old question" in text for text in texts) and any("a newer question" in t for t in texts)


def test_without_a_retention_policy_the_sweep_deletes_nothing(cases):
    cases.say("UALICE01", "an old question", mention=True)
    cases.clock.advance(days=3650)
    cases.services.sweep()
    assert len(cases.store.turns.turns(cases.parent())) == 2


def test_a_fork_of_a_fork_whose_ancestors_lost_their_old_turns_still_answers_with_one_note():
    cases = UseCases(retention=3 * 86400.0, expiry=30 * 86400.0)
    cases.say("UALICE01", "channel fact: launch on Friday", mention=True)
    top = cases.open_fork("databases")
    cases.say("UBOB0001", "compare postgres and sqlite", thread_ts=top.root_ts)
    cases.say("UBOB0001", "fork try postgres in depth", mention=True, thread_ts=top.root_ts)
    child = cases.fork(2)
    cases.clock.advance(days=4)
    cases.services.sweep()
    cases.say("UBOB0001", "where were we?", thread_ts=child.root_ts)
    texts = cases.model.texts()
    assert texts.count("[Earlier turns of this conversation were removed under the workspace's retention policy.]") == 1
    assert texts[0].startswith("[Earlier turns") and "where were we?" in texts[-1]
    assert not any("launch on Friday" in t or "compare postgres" in t for t in texts)
