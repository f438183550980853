"""Opening, merging and abandoning forks on the in-memory store: the rules of invariants 1–7."""
from bot.domain.merge import EXPIRY_ACTOR
from bot.domain.model import Channel, ForkStatus, Mode, Role

from ..fakes.ports import Answer
from .conftest import CHANNEL, UseCases


def test_an_inherited_fork_sees_the_parent_up_to_its_fork_point_and_nothing_after(cases):
    cases.say("UALICE01", "parent fact: we ship on Friday", mention=True)
    fork = cases.open_fork("release plan")
    cases.say("UALICE01", "parent, later", mention=True)
    cases.say("UBOB0001", "what day?", thread_ts=fork.root_ts)
    texts = cases.model.texts()
    assert texts[0].endswith("parent fact: we ship on Friday") and texts[1] == "Answer 1"
    assert "side session (fork #1) about: release plan" in texts[2]
    assert not any("parent, later" in t for t in texts)
    assert fork.mode is Mode.INHERIT and fork.inherited.turns == 2


def test_a_fresh_fork_sees_only_its_own_turns(cases):
    cases.say("UALICE01", "parent secret", mention=True)
    fork = cases.open_fork("--fresh clean slate")
    assert cases.model.texts() == ["[ualice01 <@UALICE01>]\nclean slate"]
    assert fork.fork_point_seq is None


def test_help_and_a_bad_flag_answer_privately_and_open_nothing(cases):
    cases.slash("/fork", "help")
    cases.slash("/fork", "--sideways topic")
    usage, refusal = cases.chat.told("UALICE01")
    assert "/fork [--fresh|--inherit] [topic]" in usage and "Unknown flag `--sideways`" in refusal
    assert cases.store.sessions.forks_in(Channel("T1", CHANNEL), ForkStatus.OPEN) == []


def test_a_merge_appends_one_summary_to_the_parent_and_the_parent_never_sees_the_forks_turns(cases):
    fork = cases.open_fork("pricing")
    cases.say("UBOB0001", "constraint: under $20", thread_ts=fork.root_ts)
    cases.model.answer(Answer("Decision: tiered."))
    cases.react("UCAROL01", fork.root_ts)
    cases.react("UDAVE001", fork.root_ts)  # a second ✅ changes nothing
    cases.slash("/merge", "1", user="UBOB0001")
    assert [s.what for s in cases.chat.said].count("post_merge") == 1
    assert "already merged" in cases.chat.of("refuse_merge")[0].text
    [summary] = cases.store.turns.turns(cases.parent())
    assert summary.role is Role.SUMMARY and summary.text.endswith("Decision: tiered.")
    assert "merged by <@UCAROL01>" in summary.text
    cases.say("UALICE01", "so?", mention=True)
    assert not any("under $20" in t for t in cases.model.texts())


def test_merging_a_fork_nobody_talked_in_is_refused_and_leaves_it_open(cases):
    fork = cases.open_fork("--fresh")
    cases.react("UALICE01", fork.root_ts)
    assert "has no turns yet" in cases.chat.told("UALICE01")[0]
    assert cases.fork().status is ForkStatus.OPEN and cases.model.inputs == []


def test_a_failed_summary_reopens_the_fork_so_it_can_be_merged_again(cases):
    fork = cases.open_fork("topic")
    cases.model.answer(Answer(error="Claude is overloaded"))
    cases.react("UALICE01", fork.root_ts)
    assert cases.fork().status is ForkStatus.OPEN and "overloaded" in cases.chat.told("UALICE01")[0]
    cases.react("UALICE01", fork.root_ts)
    assert cases.fork().status is ForkStatus.MERGED


def test_merge_without_a_number_takes_the_callers_most_recently_active_fork(cases):
    mine, _ = cases.open_fork("mine"), cases.open_fork("other", user="UBOB0001")
    cases.say("UALICE01", "back to mine", thread_ts=mine.root_ts)
    cases.slash("/merge", "", user="UALICE01")
    assert cases.fork(1).status is ForkStatus.MERGED and cases.fork(2).status is ForkStatus.OPEN
    cases.slash("/merge", "", user="UCAROL01")
    cases.slash("/merge", "7", user="UCAROL01")
    none, unknown = [s.text for s in cases.chat.of("refuse_merge")]
    assert "You have no open fork" in none and "no fork #7" in unknown
    assert cases.chat.of("refuse_merge")[0].args[2] == [cases.fork(2)]  # the open forks are listed


def test_under_the_owner_policy_only_the_owner_merges_or_abandons_but_expiry_may():
    cases = UseCases(merge_policy="owner")
    fork = cases.open_fork("mine alone")
    cases.react("UBOB0001", fork.root_ts)
    cases.react("UBOB0001", fork.root_ts, "x")
    assert cases.fork().status is ForkStatus.OPEN
    assert all("Only <@UALICE01>" in t for t in cases.chat.told("UBOB0001"))
    cases.services.forks.merge(cases.fork(), EXPIRY_ACTOR)
    assert cases.fork().status is ForkStatus.MERGED


def test_an_abandoned_fork_adds_nothing_to_the_parent(cases):
    fork = cases.open_fork("dead end")
    cases.react("UBOB0001", fork.root_ts, "x")
    assert cases.fork().status is ForkStatus.ABANDONED and cases.store.turns.turns(cases.parent()) == []
    assert "abandoned this fork" in cases.chat.of("note_in_thread")[0].text


def test_a_fork_whose_root_slack_refuses_is_abandoned_its_topic_kept_unanswered_and_its_lease_let_go(cases):
    cases.chat.refuse.add("post_fork_root")
    cases.slash("/fork", "an idea nobody will see")
    [fork] = cases.all_forks()
    assert fork.status is ForkStatus.ABANDONED and fork.root_ts is None
    assert cases.turns(fork.id) == [("user", "failed", "an idea nobody will see")]
    assert cases.model.inputs == []  # no model call for a fork nobody can see
    assert cases.store.leases.lease(fork.id, "anyone", 30)  # nobody holds it
