"""Reviewed summaries (THREADFORK_MERGE_REVIEW=on), end to end through the fakes: the draft in the
fork's thread with its four buttons, Edit and Redraft through real modals (views.open from the
button's trigger, view_submission back), Cancel, and two people pressing Merge as is at once."""
import pytest

from ..fakes.anthropic_api import Script, is_merge_request, request_texts
from ..harness import CHANNEL, at_once, wait_until
from .test_merge import open_fork_with_talk, summaries

pytestmark = pytest.mark.settings(threadfork_merge_review="on")

BUTTONS = ["Merge as is", "Edit", "Redraft", "Cancel"]


def merge_requests(claude):
    return [r for r in claude.requests if is_merge_request(r)]


def drafts(slack, root):
    return [p for p in slack.posts(CHANNEL, top_level=False) if p.get("thread_ts") == root and "Draft " in p.get("text", "")]


def buttons(post) -> list[str]:
    return [e["text"]["text"] for b in post["blocks"] if b["type"] == "actions" for e in b["elements"]]


def drafted(bot, slack, claude, text="Draft: tiered pricing.", user="UCAROL01"):
    root = open_fork_with_talk(bot, slack)
    claude.script(Script(text=text, usage={"output_tokens": 30}))
    bot.react(user, root)
    [draft] = wait_until(lambda: drafts(slack, root), message="the draft in the thread")
    bot.settled()
    return root, draft


def parent_texts_after_asking(bot, claude):
    before = len(claude.requests)
    bot.say("UALICE01", "what did we decide?", mention=True)
    wait_until(lambda: len(claude.requests) == before + 1)
    bot.settled()
    return request_texts(claude.requests[-1])


def test_the_draft_is_posted_in_the_thread_with_its_buttons_and_nothing_enters_the_parent(bot, slack, claude):
    root, draft = drafted(bot, slack, claude)
    assert buttons(draft) == BUTTONS and "Draft: tiered pricing." in draft.shown
    assert "asked for by <@UCAROL01>" in draft["blocks"][0]["text"]["text"]
    assert not summaries(slack) and len(merge_requests(claude)) == 1
    assert not any("tiered pricing" in t for t in parent_texts_after_asking(bot, claude))


def test_merge_as_is_posts_the_draft_as_the_summary_with_no_second_request(bot, slack, claude):
    root, draft = drafted(bot, slack, claude)
    bot.click("draft_merge", message_ts=draft.ts, user="UDAVE001")
    [post] = wait_until(lambda: summaries(slack), message="the merge post")
    bot.settled()
    assert "<@UDAVE001> merged fork #1" in post["blocks"][0]["text"]["text"] and "edited" not in post["text"]
    assert post["blocks"][1] == {"type": "markdown", "text": "Draft: tiered pricing."}
    assert len(merge_requests(claude)) == 1
    settled = slack.message(draft.ts, CHANNEL)
    assert not buttons(settled) and "Merged as is by <@UDAVE001>" in settled["text"]
    assert any(t.endswith("\nDraft: tiered pricing.") for t in parent_texts_after_asking(bot, claude))


def test_edit_opens_a_modal_with_the_draft_and_the_saved_text_is_what_enters_the_parent(bot, slack, claude):
    root, draft = drafted(bot, slack, claude)
    bot.click("draft_edit", message_ts=draft.ts, user="UERIN001")
    [modal] = wait_until(lambda: slack.opened_views("threadfork_edit_summary"), message="the edit modal")
    assert modal.user == "UERIN001" and modal.view["blocks"][1]["element"]["initial_value"] == "Draft: tiered pricing."
    reply = bot.submit_view(modal, {"summary_1": "Decision: tiers, capped at $20."})
    assert reply.status == 200 and not reply.body
    [post] = wait_until(lambda: summaries(slack), message="the merge post")
    bot.settled()
    assert "summary edited by <@UERIN001>" in post["text"]
    assert post["blocks"][1]["text"] == "Decision: tiers, capped at $20."
    assert len(merge_requests(claude)) == 1
    texts = parent_texts_after_asking(bot, claude)
    assert any(t.endswith("\nDecision: tiers, capped at $20.") and "edited by <@UERIN001>" in t for t in texts)
    assert not any("Draft: tiered pricing." in t for t in texts)


def test_an_empty_edit_is_refused_inside_the_modal_and_nothing_changes(bot, slack, claude):
    root, draft = drafted(bot, slack, claude)
    bot.click("draft_edit", message_ts=draft.ts)
    [modal] = wait_until(lambda: slack.opened_views("threadfork_edit_summary"))
    reply = bot.submit_view(modal, {"summary_1": "   "})
    assert reply.json()["response_action"] == "errors" and "can't be empty" in reply.json()["errors"]["summary_1"]
    bot.settled()
    assert not summaries(slack) and buttons(slack.message(draft.ts, CHANNEL)) == BUTTONS


def test_redraft_asks_for_guidance_and_one_new_request_replaces_the_draft(bot, slack, claude):
    root, draft = drafted(bot, slack, claude)
    value = draft["blocks"][-1]["elements"][0]["value"]
    bot.click("draft_redraft", message_ts=draft.ts)
    [modal] = wait_until(lambda: slack.opened_views("threadfork_redraft"), message="the guidance modal")
    claude.script(Script(text="Draft two: tiers, shorter."))
    bot.submit_view(modal, {"guidance": "shorter please"})
    wait_until(lambda: len(drafts(slack, root)) == 2, message="the second draft")
    bot.settled()
    requests = merge_requests(claude)
    assert len(requests) == 2 and "Their guidance for the summary: shorter please" in request_texts(requests[1])[-1]
    old, new = drafts(slack, root)
    assert not buttons(slack.message(old.ts, CHANNEL)) and "Replaced by draft 2" in slack.message(old.ts, CHANNEL)["text"]
    assert buttons(new) == BUTTONS and "Draft two" in new.shown
    bot.click("draft_merge", value, message_ts=old.ts)  # its button, pressed in a client not yet updated
    wait_until(lambda: any("no longer waiting" in r.get("text", "") for r in slack.responses))
    assert not summaries(slack)


def test_cancel_leaves_the_fork_open_and_merges_nothing(bot, slack, claude):
    root, draft = drafted(bot, slack, claude)
    bot.click("draft_cancel", message_ts=draft.ts)
    wait_until(lambda: "Cancelled" in slack.message(draft.ts, CHANNEL)["text"])
    bot.settled()
    assert not summaries(slack) and not buttons(slack.message(draft.ts, CHANNEL))
    before = len(claude.requests)
    bot.say("UBOB0001", "still exploring", thread_ts=root)
    wait_until(lambda: len(claude.requests) == before + 1)  # the fork still answers
    assert not any("tiered pricing" in t for t in parent_texts_after_asking(bot, claude))


def test_two_people_pressing_merge_as_is_at_once_merge_once(bot, slack, claude):
    root, draft = drafted(bot, slack, claude)
    at_once(lambda: bot.click("draft_merge", message_ts=draft.ts, user="UALICE01"),
            lambda: bot.click("draft_merge", message_ts=draft.ts, user="UBOB0001"))
    wait_until(lambda: summaries(slack))
    bot.settled()
    assert len(summaries(slack)) == 1 and len(merge_requests(claude)) == 1
    texts = parent_texts_after_asking(bot, claude)
    assert sum(1 for t in texts if t.startswith("[Merged fork #1")) == 1


def test_a_turn_after_the_draft_makes_it_stale_and_says_so(bot, slack, claude):
    root, draft = drafted(bot, slack, claude)
    bot.say("UBOB0001", "wait, one more constraint", thread_ts=root)
    [note] = wait_until(lambda: [p for p in slack.posts(CHANNEL, top_level=False) if "stale" in p.get("text", "")])
    bot.settled()
    assert note["thread_ts"] == root
    bot.click("draft_merge", message_ts=draft.ts)
    wait_until(lambda: any("is stale" in r.get("text", "") for r in slack.responses))
    assert not summaries(slack)


def test_a_long_draft_saved_untouched_merges_byte_for_byte_and_is_not_called_edited(bot, slack, claude):
    text = "\n\n".join(f"Section {n}: " + "decided things " * 60 for n in range(12))  # ~11,000 characters
    root, draft = drafted(bot, slack, claude, text=text)
    bot.click("draft_edit", message_ts=draft.ts, user="UERIN001")
    [modal] = wait_until(lambda: slack.opened_views("threadfork_edit_summary"))
    boxes = [b for b in modal.view["blocks"] if b["type"] == "input"]
    assert len(boxes) == 4 and all(len(b["element"]["initial_value"]) <= 3000 for b in boxes)
    assert bot.submit_view(modal, {}).status == 200
    [post] = wait_until(lambda: summaries(slack))
    bot.settled()
    assert "edited" not in post["text"]
    parent = parent_texts_after_asking(bot, claude)
    assert any(t.endswith("\n" + text) for t in parent)
