"""Reviewed summaries (THREADFORK_MERGE_REVIEW), on the in-memory store."""
import threading

import pytest

from bot.domain.merge import EXPIRY_ACTOR
from bot.domain.model import ForkStatus, Usage
from bot.domain.settings import ChannelSettings
from bot.services.ports import Audience

from ..fakes.ports import Answer
from .conftest import CHANNEL, UseCases


@pytest.fixture
def cases():
    return UseCases(merge_review=True)


def talked_fork(cases, topic="pricing"):
    fork = cases.open_fork(topic)
    cases.say("UBOB0001", "we need tiers", thread_ts=fork.root_ts)
    return cases.fork(fork.number)


def press(cases, verb, fork, number, user="UALICE01"):
    audience = Audience("T1", CHANNEL, user, response_url="https://hooks.slack.test/action")
    cases.services.reviews.pressed(verb, fork.id, number, user, audience, "trigger-1")


def summary_requests(cases):
    return [i for i in cases.model.inputs if "[Merge request]" in i.blocks[-1].text]


def test_a_merge_gesture_posts_a_draft_and_nothing_enters_the_parent(cases):
    fork = talked_fork(cases)
    cases.model.answer(Answer("Draft: tiers win."))
    cases.react("UCAROL01", fork.root_ts)
    [posted] = cases.chat.of("post_draft")
    drafted_fork, draft, guidance = posted.args
    assert (draft.number, draft.text, draft.requested_by, guidance) == (1, "Draft: tiers win.", "UCAROL01", "")
    assert cases.fork(fork.number).status is ForkStatus.OPEN
    assert cases.fork(fork.number).draft.ts == posted.ts
    assert not any(role == "summary" for role, _, _ in cases.turns(cases.parent()))
    assert not cases.chat.of("post_merge") and len(summary_requests(cases)) == 1


def test_merge_as_is_merges_the_drafts_text_without_asking_claude_again(cases):
    fork = talked_fork(cases)
    cases.model.answer(Answer("Draft: tiers win."))
    cases.react("UCAROL01", fork.root_ts)
    press(cases, "approve", fork, 1, user="UDAVE001")
    merged = cases.fork(fork.number)
    assert merged.status is ForkStatus.MERGED and merged.merged_by == "UDAVE001" and merged.draft is None
    assert cases.turns(cases.parent())[-1][2].endswith("Draft: tiers win.")
    assert len(summary_requests(cases)) == 1
    [closed] = cases.chat.of("close_draft")
    assert "Merged as is by <@UDAVE001>" in closed.args[2]


def test_an_edit_enters_the_parent_and_says_who_edited(cases):
    fork = talked_fork(cases)
    cases.react("UCAROL01", fork.root_ts)
    cases.services.reviews.saved_edit(fork.id, 1, "UERIN001", Audience("T1", CHANNEL, "UERIN001"), "Edited: tiers.")
    merged = cases.fork(fork.number)
    assert merged.summary_edited_by == "UERIN001" and merged.merged_by == "UERIN001"
    parent_text = cases.turns(cases.parent())[-1][2]
    assert "summary edited by <@UERIN001>" in parent_text and parent_text.endswith("\nEdited: tiers.")
    assert cases.chat.of("post_merge")[0].args[2] == "Edited: tiers."


def test_edit_and_redraft_buttons_open_their_modals_with_the_trigger(cases):
    fork = talked_fork(cases)
    cases.react("UCAROL01", fork.root_ts)
    press(cases, "edit", fork, 1)
    press(cases, "redraft", fork, 1)
    assert cases.chat.of("open_draft_editor")[0].args[1] == "trigger-1"
    assert cases.chat.of("ask_redraft_guidance")[0].args[3].number == 1


def test_a_redraft_replaces_the_draft_with_one_new_request_carrying_the_guidance(cases):
    fork = talked_fork(cases)
    cases.model.answer(Answer("Draft one."), Answer("Draft two."))
    cases.react("UCAROL01", fork.root_ts)
    cases.services.reviews.asked_redraft(fork.id, 1, "UALICE01", Audience("T1", CHANNEL, "UALICE01"), "shorter")
    requests = summary_requests(cases)
    assert len(requests) == 2 and "Their guidance for the summary: shorter" in requests[1].blocks[-1].text
    first, second = cases.chat.of("post_draft")
    assert second.args[1].number == 2 and second.args[1].text == "Draft two." and second.args[2] == "shorter"
    [closed] = cases.chat.of("close_draft")
    assert closed.args[1].number == 1 and "Replaced by draft 2" in closed.args[2]
    press(cases, "approve", fork, 1)  # the old draft's button
    assert "no longer waiting for review" in cases.chat.told("UALICE01")[-1]
    assert cases.fork(fork.number).status is ForkStatus.OPEN


def test_cancel_leaves_the_fork_open_and_a_later_merge_drafts_again(cases):
    fork = talked_fork(cases)
    cases.react("UCAROL01", fork.root_ts)
    press(cases, "cancel", fork, 1)
    assert cases.fork(fork.number).draft is None and cases.fork(fork.number).status is ForkStatus.OPEN
    assert "Cancelled by <@UALICE01>" in cases.chat.of("close_draft")[0].args[2]
    press(cases, "approve", fork, 1)
    assert "no longer waiting" in cases.chat.told("UALICE01")[-1]
    cases.react("UCAROL01", fork.root_ts)
    assert cases.chat.of("post_draft")[-1].args[1].number == 2


def test_a_second_merge_gesture_while_a_draft_waits_is_refused_privately(cases):
    fork = talked_fork(cases)
    cases.react("UCAROL01", fork.root_ts)
    cases.slash("/merge", str(fork.number), user="UDAVE001")
    assert len(cases.chat.of("post_draft")) == 1 and len(summary_requests(cases)) == 1
    [refusal] = cases.chat.of("refuse_merge")
    assert refusal.args[0].user_id == "UDAVE001" and "already waiting" in refusal.args[1]


def test_a_new_turn_makes_the_draft_stale_once_and_merge_as_is_then_asks_for_a_redraft(cases):
    fork = talked_fork(cases)
    cases.react("UCAROL01", fork.root_ts)
    cases.say("UBOB0001", "actually, one more idea", thread_ts=fork.root_ts)
    cases.say("UBOB0001", "and another", thread_ts=fork.root_ts)
    stale = [s for s in cases.chat.of("note_in_thread") if "stale" in s.text]
    assert len(stale) == 1 and "Draft 1" in stale[0].text
    press(cases, "approve", fork, 1)
    assert "is stale" in cases.chat.told("UALICE01")[-1] and cases.fork(fork.number).status is ForkStatus.OPEN
    cases.react("UCAROL01", fork.root_ts)  # a merge gesture on a stale draft drafts anew
    assert cases.chat.of("post_draft")[-1].args[1].number == 2
    assert any("and another" in b.text for b in summary_requests(cases)[-1].blocks)


def test_two_simultaneous_merge_as_is_presses_merge_once(cases):
    fork = talked_fork(cases)
    cases.react("UCAROL01", fork.root_ts)
    barrier = threading.Barrier(2)

    def approve(user):
        barrier.wait()
        press(cases, "approve", fork, 1, user=user)

    threads = [threading.Thread(target=approve, args=(u,)) for u in ("UALICE01", "UBOB0001")]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert len(cases.chat.of("post_merge")) == 1
    assert sum(1 for role, _, _ in cases.turns(cases.parent()) if role == "summary") == 1
    assert len(cases.chat.told()) == 1 and "merg" in cases.chat.told()[0]


def test_the_merge_policy_applies_to_the_review_buttons():
    cases = UseCases(merge_review=True, merge_policy="owner")
    fork = talked_fork(cases)
    cases.react("UALICE01", fork.root_ts)
    for verb in ("approve", "edit", "redraft", "cancel"):
        press(cases, verb, fork, 1, user="UMALLORY")
    assert len(cases.chat.told("UMALLORY")) == 4 and all("Only <@UALICE01>" in t for t in cases.chat.told("UMALLORY"))
    assert cases.fork(fork.number).draft is not None and not cases.chat.of("open_draft_editor")


def test_an_idle_forks_expiry_drafts_once_and_merges_nothing_until_a_person_approves(cases):
    fork = talked_fork(cases)
    cases.model.answer(Answer("Expiry draft."))
    cases.services.forks.merge(cases.fork(fork.number), EXPIRY_ACTOR)
    cases.services.forks.merge(cases.fork(fork.number), EXPIRY_ACTOR)  # the next sweep: its draft still waits
    [posted] = cases.chat.of("post_draft")
    assert posted.args[1].requested_by == EXPIRY_ACTOR and len(summary_requests(cases)) == 1
    assert cases.fork(fork.number).status is ForkStatus.OPEN
    assert not any(role == "summary" for role, _, _ in cases.turns(cases.parent()))
    press(cases, "approve", fork, 1)
    assert cases.turns(cases.parent())[-1][2].endswith("Expiry draft.")


def test_a_draft_left_waiting_when_the_channel_turns_review_off_says_it_was_not_used(cases):
    fork = talked_fork(cases)
    cases.react("UCAROL01", fork.root_ts)
    cases.store.channel_settings.save(fork.channel, ChannelSettings(merge_review=False), "UADMIN01")
    cases.model.answer(Answer("Direct summary."))
    cases.react("UCAROL01", fork.root_ts)
    assert cases.fork(fork.number).status is ForkStatus.MERGED
    assert "Not used: <@UCAROL01> merged the fork directly" in cases.chat.of("close_draft")[0].args[2]


def test_every_drafts_usage_counts_in_the_forks_burn(cases):
    fork = talked_fork(cases)
    before = cases.store.views.stats(fork.id).burned.total
    cases.model.answer(Answer("Draft one.", usage=Usage(500, 50)))
    cases.react("UCAROL01", fork.root_ts)
    assert cases.store.views.stats(fork.id).burned.total == before + 550


def test_an_edit_is_refused_in_its_modal_when_empty_or_when_the_draft_moved_on(cases):
    fork = talked_fork(cases)
    cases.react("UCAROL01", fork.root_ts)
    reviews, channel = cases.services.reviews, cases.fork(fork.number).channel
    assert "can't be empty" in reviews.edit_refused(fork.id, 1, "UALICE01", channel, "  ")
    assert "no longer waiting" in reviews.edit_refused(fork.id, 7, "UALICE01", channel, "text")
    assert reviews.edit_refused(fork.id, 1, "UALICE01", channel, "text") is None


def test_a_redraft_that_fails_leaves_the_live_draft_mergeable_and_says_why(cases):
    fork = talked_fork(cases)
    cases.model.answer(Answer("Draft one."), Answer(error="Claude is overloaded"))
    cases.react("UCAROL01", fork.root_ts)
    cases.services.reviews.asked_redraft(fork.id, 1, "UALICE01", Audience("T1", CHANNEL, "UALICE01"), "shorter")
    assert "overloaded" in cases.chat.told("UALICE01")[-1]
    live = cases.fork(fork.number).draft
    assert (live.number, live.text) == (1, "Draft one.") and not cases.chat.of("close_draft")
    press(cases, "approve", fork, 1)
    assert cases.turns(cases.parent())[-1][2].endswith("Draft one.")


def test_redraft_is_refused_while_a_fork_of_the_fork_is_open(cases):
    fork = talked_fork(cases)
    cases.react("UCAROL01", fork.root_ts)
    cases.say("UBOB0001", "fork a child", mention=True, thread_ts=fork.root_ts)
    asked = len(summary_requests(cases))
    cases.services.reviews.asked_redraft(fork.id, 1, "UALICE01", Audience("T1", CHANNEL, "UALICE01"), "")
    assert len(summary_requests(cases)) == asked and cases.chat.of("refuse_with_children")


def test_merge_by_slash_command_says_privately_where_the_draft_waits(cases):
    fork = talked_fork(cases)
    cases.slash("/merge", str(fork.number), user="UDAVE001")
    [told] = cases.chat.told("UDAVE001")
    assert "Draft 1 of fork #1" in told and "in its thread" in told


def test_the_reminder_of_a_fork_under_review_promises_a_draft_not_a_merge(cases):
    talked_fork(cases)
    cases.clock.advance(days=2)
    cases.services.sweep()
    [reminder] = cases.chat.of("remind")
    assert reminder.args[1] == "draft"


def test_the_forks_list_shows_a_draft_waiting(cases):
    from bot.slack.views import fork_line

    fork = talked_fork(cases)
    cases.react("UCAROL01", fork.root_ts)
    [listing] = cases.services.forks.listings([cases.fork(fork.number)])
    assert "📝 draft 1 waiting for review" in fork_line(listing)
