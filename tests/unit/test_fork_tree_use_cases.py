"""Forks of forks and conflict notices, on the in-memory store."""
import pytest

from bot.domain.model import ForkStatus

from ..fakes.ports import Answer
from .conftest import UseCases


def nested(cases, parent, text="", user="UBOB0001"):
    """`@Threadfork fork <text>` in the parent fork's thread; the newest fork."""
    cases.say(user, f"fork {text}", mention=True, thread_ts=parent.root_ts)
    return cases.fork(max(f.number for f in cases.all_forks()))


def test_a_fork_of_a_fork_inherits_its_parent_forks_input_and_merges_back_into_it(cases):
    cases.say("UALICE01", "channel fact: launch on Friday", mention=True)
    top = cases.open_fork("databases")
    cases.say("UBOB0001", "compare postgres and sqlite", thread_ts=top.root_ts)
    top_request = cases.model.inputs[-1]
    child = nested(cases, top, "try postgres in depth")
    assert (child.number, child.depth, child.parent_id, child.parent_number) == (2, 2, top.id, 1)
    [root] = [s.args[0] for s in cases.chat.of("post_fork_root") if s.args[0].id == child.id]
    assert root.nested and root.parent_root_ts == top.root_ts
    child_request = cases.model.inputs[-1]
    assert [b.text for b in child_request.blocks[:len(top_request.blocks)]] == [b.text for b in top_request.blocks]
    assert "background from fork #1" in child_request.blocks[len(top_request.blocks) + 1].text
    assert "opened fork #2 from this thread" in cases.chat.of("note_in_thread")[-1].text
    cases.model.answer(Answer("Postgres: use it."))
    cases.react("UBOB0001", child.root_ts)
    [post] = cases.chat.of("post_merge")
    assert post.args[0].id == child.id and post.args[0].parent_root_ts == top.root_ts
    assert cases.turns(top.id)[-1][0] == "summary" and cases.turns(top.id)[-1][2].endswith("Postgres: use it.")
    assert all(role != "summary" for role, _, _ in cases.turns(cases.parent()))
    cases.say("UBOB0001", "so?", thread_ts=top.root_ts)
    assert "Postgres: use it." in cases.model.texts()[-2]  # the parent fork now knows
    cases.say("UALICE01", "and the channel?", mention=True)
    assert not any("Postgres: use it." in t for t in cases.model.texts())


def test_a_fork_with_open_children_cannot_close_until_they_do(cases):
    top = cases.open_fork("top")
    cases.say("UBOB0001", "hello", thread_ts=top.root_ts)
    first, second = nested(cases, top, "a"), nested(cases, top, "b")
    cases.react("UALICE01", top.root_ts)
    cases.say("UALICE01", "abandon", mention=True, thread_ts=top.root_ts)
    refusals = cases.chat.of("refuse_with_children")
    assert len(refusals) == 2 and all(r.args[0].user_id == "UALICE01" for r in refusals)
    assert [c.number for c in refusals[0].args[2]] == [first.number, second.number]
    assert "#2, #3" in refusals[0].args[1] and cases.fork(top.number).status is ForkStatus.OPEN
    cases.services.gestures.button(second.id, "UALICE01", "abandon", top.channel)
    cases.say("UBOB0001", "hi", thread_ts=first.root_ts)
    cases.react("UALICE01", first.root_ts)
    cases.react("UALICE01", top.root_ts)
    assert cases.fork(top.number).status is ForkStatus.MERGED


def test_forks_nest_only_as_deep_as_the_policy_allows():
    cases = UseCases(max_fork_depth=2)
    top = cases.open_fork("top")
    child = nested(cases, top, "child")
    assert child.depth == 2
    cases.say("UCAROL01", "fork grandchild", mention=True, thread_ts=child.root_ts)
    [refusal] = cases.chat.told("UCAROL01")
    assert "at most 2 deep" in refusal and len(cases.all_forks()) == 2


def test_fork_from_here_on_a_forks_message_forks_that_fork_up_to_it(cases):
    top = cases.open_fork("top")
    early = cases.say("UBOB0001", "first thought", thread_ts=top.root_ts)
    cases.say("UBOB0001", "second thought", thread_ts=top.root_ts)
    cases.services.gestures.fork_from_message(top.channel, "UCAROL01", early, top.root_ts, None)
    child = cases.fork(2)
    assert child.parent_id == top.id and child.fork_point_seq == 3  # the topic, its answer, "first thought"
    cases.say("UCAROL01", "go", thread_ts=child.root_ts)
    texts = cases.model.texts()
    assert any("first thought" in t for t in texts) and not any("second thought" in t for t in texts)


def test_a_merge_after_other_merges_into_the_same_parent_asks_about_conflicts_and_shows_them(cases):
    cases.say("UALICE01", "we need a database", mention=True)
    one, two = cases.open_fork("one"), cases.open_fork("two")
    cases.say("UBOB0001", "sqlite", thread_ts=one.root_ts)
    cases.say("UBOB0001", "postgres", thread_ts=two.root_ts)
    cases.model.answer(Answer("Decision: SQLite."))
    cases.react("UBOB0001", one.root_ts)
    assert "Conflicts" not in cases.model.texts()[-1]  # nothing merged since fork #1 began
    cases.model.answer(Answer("Decision: Postgres.\n\n## Conflicts\n- Fork #1: we chose Postgres, #1 chose SQLite"))
    cases.react("UBOB0001", two.root_ts)
    request = cases.model.texts()[-1]
    assert "Fork #1" in request and "Decision: SQLite." in request and "`Conflicts`" in request
    summary = cases.chat.of("post_merge")[-1].args[2]
    assert summary.endswith("⚠️ Conflicts with fork #1: we chose Postgres, #1 chose SQLite")
    assert "## Conflicts" not in summary
    parent_turns = cases.turns(cases.parent())
    assert parent_turns[-1][2].endswith("⚠️ Conflicts with fork #1: we chose Postgres, #1 chose SQLite")


@pytest.mark.parametrize("fresh", [False, True])
def test_a_fork_opened_after_a_merge_is_not_asked_about_it(cases, fresh):
    one = cases.open_fork("one")
    cases.say("UBOB0001", "x", thread_ts=one.root_ts)
    cases.react("UBOB0001", one.root_ts)
    two = cases.open_fork(("--fresh " if fresh else "") + "two")
    cases.say("UBOB0001", "y", thread_ts=two.root_ts)
    cases.react("UBOB0001", two.root_ts)
    assert "Conflicts" not in cases.model.texts()[-1]
