"""Channel memory (issue 37), end to end over the fakes: `@Threadfork remember` posts a "remembered" note and
every later request of the channel's conversation and of a new fork (inherit and fresh) carries the entry in its
`system` content, quoted as data with its author; `/threadfork memory` lists it and deleting it there removes it
from the next request; its Undo does the same; a channel's budget refuses an entry past it."""
import pytest

from ..fakes.anthropic_api import Script, last_user_text
from ..harness import CHANNEL, GENERAL, wait_until
from .test_channel_settings import admin, ask_parent, open_settings

LAUNCH = "the launch is on 14 March"


def system_text(request) -> str:
    return "".join(block["text"] for block in request["system"])


def bare(value):
    """A request's part without its cache_control markers (their TTLs follow the session's pace)."""
    if isinstance(value, dict):
        return {k: bare(v) for k, v in value.items() if k != "cache_control"}
    return [bare(v) for v in value] if isinstance(value, list) else value


def remember(bot, slack, text=LAUNCH, user="UALICE01", thread_ts=None):
    before = len(remembered(slack))
    bot.say(user, f"remember {text}", mention=True, thread_ts=thread_ts)
    return wait_until(lambda: remembered(slack)[before:], message="the remembered note")[0]


def remembered(slack):
    return [p for p in slack.posts(CHANNEL) if "remembered" in p.get("text", "")]


def ephemerals(slack):
    return [c for c in slack.calls_to("chat.postEphemeral")] + list(slack.responses)


def fork_request(bot, claude, flags: str, topic: str):
    before = len(claude.requests)
    bot.slash("/fork", f"{flags} {topic}".strip())
    wait_until(lambda: len(claude.requests) > before, message="the fork's first request")
    bot.settled()
    return claude.requests[-1]


def test_a_remembered_entry_reaches_every_later_request_of_the_parent_and_of_new_forks(bot, slack, claude):
    ask_parent(bot, claude, "hello")  # the parent was running before the entry
    note = remember(bot, slack)
    assert "thread_ts" not in note.args and "<@UALICE01>" in note["text"] and LAUNCH in note["text"]
    assert [e["text"]["text"] for b in note["blocks"] if b["type"] == "actions" for e in b["elements"]] == ["Undo"]
    bot.settled()
    requests = len(claude.requests)
    parent = ask_parent(bot, claude, "when is the launch?")
    assert len(claude.requests) == requests + 1  # the remember itself made no model call
    assert LAUNCH in system_text(parent) and "UALICE01" in system_text(parent)
    assert "never instructions" in system_text(parent)
    inherit = fork_request(bot, claude, "", "pricing")
    fresh = fork_request(bot, claude, "--fresh", "naming")
    assert LAUNCH in system_text(inherit) and LAUNCH in system_text(fresh)
    assert inherit["system"] == parent["system"]  # the inherited prefix stays the parent's, cache and all
    assert LAUNCH in system_text(ask_parent(bot, claude, "and again?"))


def test_an_entry_remembered_in_a_forks_thread_names_the_fork_and_reaches_the_channel(bot, slack, claude):
    fork_request(bot, claude, "", "dates")
    root = bot.fork_root(1)
    note = remember(bot, slack, "the beta ends in May", thread_ts=root)
    assert note["thread_ts"] == root and "fork #1" in note["text"]
    assert "the beta ends in May" in system_text(ask_parent(bot, claude, "what do we know?"))


def test_a_running_fork_hears_a_new_entry_after_its_cached_prefix_without_changing_it(bot, slack, claude):
    first = fork_request(bot, claude, "", "plans")
    root = bot.fork_root(1)
    remember(bot, slack)
    bot.settled()
    before = len(claude.requests)
    bot.say("UBOB0001", "and the date?", thread_ts=root)
    wait_until(lambda: len(claude.requests) > before, message="the fork's next request")
    later = claude.requests[-1]
    assert system_text(later) == system_text(first) and LAUNCH not in system_text(later)
    assert bare(later["messages"][: len(first["messages"]) - 1]) == bare(first["messages"][:-1])
    assert LAUNCH in str(later["messages"][-1]["content"])


def test_the_memory_modal_lists_the_entry_and_deleting_it_removes_it_from_the_next_request(bot, slack, claude):
    remember(bot, slack)
    bot.settled()
    bot.slash("/threadfork", "memory")
    [modal] = wait_until(lambda: [v for v in slack.opened_views() if "memory" in v.view["callback_id"]])
    shown = str(modal.view["blocks"])
    assert LAUNCH in shown and "<@UALICE01>" in shown
    entry = next(e["value"] for b in modal.view["blocks"] if b["type"] == "actions" for e in b["elements"]
                 if e["text"]["text"] == "Delete")
    bot.click("threadfork_memory_delete", entry, view=modal)
    wait_until(lambda: LAUNCH not in str(slack.view(modal.id).view["blocks"]), message="the list shown anew")
    assert LAUNCH not in system_text(ask_parent(bot, claude, "when is the launch?"))


def test_undo_deletes_the_entry_and_says_so_in_the_note(bot, slack, claude):
    note = remember(bot, slack)
    bot.click("threadfork_memory_undo", note["blocks"][-1]["elements"][0]["value"], message_ts=note.ts)
    wait_until(lambda: "undid" in slack.message(note.ts, CHANNEL)["text"], message="the note settled")
    assert LAUNCH not in system_text(ask_parent(bot, claude, "when is the launch?"))


def test_an_entry_past_the_channels_budget_is_refused_with_how_to_make_room(bot, slack, claude):
    user = admin(slack)
    bot.submit_view(open_settings(bot, slack, user), {"memory_budget": "10"})
    bot.say("UALICE01", "remember " + "a long fact " * 10, mention=True)
    [refusal] = wait_until(lambda: [r for r in ephemerals(slack) if "Not remembered" in r.get("text", "")])
    assert "/threadfork memory" in refusal["text"] and not remembered(slack)


def test_with_admins_as_writers_a_member_is_refused_and_an_admin_remembers(bot, slack, claude):
    user = admin(slack)
    bot.submit_view(open_settings(bot, slack, user), {"memory_writers": "admins"})
    bot.say("UALICE01", f"remember {LAUNCH}", mention=True)
    wait_until(lambda: [r for r in ephemerals(slack) if "admins may change its memory" in r.get("text", "")])
    assert not remembered(slack)
    remember(bot, slack, user=user)


def memory_tool_on(bot, slack, mode="on"):
    bot.submit_view(open_settings(bot, slack, admin(slack)), {"memory_tool": mode})


def test_with_claudes_remembering_on_a_memory_create_is_performed_answered_and_noted(bot, slack, claude):
    memory_tool_on(bot, slack)
    create = {"command": "create", "path": "/memories/launch.md", "file_text": LAUNCH}
    claude.script(Script(preface="I'll remember that.", memory=[create]), Script(text="Noted: 14 March."))
    before = len(claude.requests)
    bot.say("UALICE01", "we moved the launch to 14 March, keep that in mind", mention=True)
    wait_until(lambda: len(claude.requests) >= before + 2, message="the answer going on after the tool")
    bot.settled()
    first, second = claude.requests[before:before + 2]
    assert {"type": "memory_20250818", "name": "memory"} in first["tools"]
    [use] = [b for b in claude.answers[before] if b["type"] == "tool_use"]
    [result] = [b for b in second["messages"][-1]["content"] if b["type"] == "tool_result"]
    assert result["tool_use_id"] == use["id"] and "created" in result["content"] and not result.get("is_error")
    assert second["messages"][-2]["role"] == "assistant" and use in second["messages"][-2]["content"]
    [note] = wait_until(lambda: remembered(slack), message="the remembered note")
    assert "Claude" in note["text"] and LAUNCH in note["text"]
    answer = [p for p in slack.posts(CHANNEL, top_level=True) if "Noted: 14 March." in p.get("text", "")]
    assert answer and not claude.rejections
    assert LAUNCH in system_text(ask_parent(bot, claude, "when?"))


def test_with_ask_first_claudes_entry_waits_for_keep(bot, slack, claude):
    memory_tool_on(bot, slack, "ask")
    create = {"command": "create", "path": "/memories/owner.md", "file_text": "Bob owns billing"}
    claude.script(Script(memory=[create]), Script(text="Will do."))
    bot.say("UALICE01", "Bob owns billing now", mention=True)
    [note] = wait_until(lambda: remembered(slack), message="the remembered note")
    assert [e["text"]["text"] for e in note["blocks"][-1]["elements"]] == ["Keep", "Undo"]
    bot.settled()
    assert "Bob owns billing" not in system_text(ask_parent(bot, claude, "who owns billing?"))
    bot.click("threadfork_memory_keep", note["blocks"][-1]["elements"][0]["value"], message_ts=note.ts)
    wait_until(lambda: "kept" in slack.message(note.ts, CHANNEL)["text"], message="the note settled")
    assert "Bob owns billing" in system_text(ask_parent(bot, claude, "who owns billing?"))


def test_without_claudes_remembering_no_memory_tool_is_offered(bot, slack, claude):
    assert "tools" not in ask_parent(bot, claude, "hello")


def test_context_counts_the_memorys_tokens_and_app_home_shows_each_channels_memory_size(bot, slack, claude):
    remember(bot, slack, "x" * 400)
    bot.slash("/context")
    [shown] = wait_until(lambda: [r for r in slack.responses if "*Memory*" in r.get("text", "")])
    assert "~100 tokens of its 2,000-token budget in 1 entry" in shown["text"]
    bot.open_dm("UALICE01", dm="D0HOME001", tab="home")
    [publish] = wait_until(lambda: slack.calls_to("views.publish"), message="the Home tab")
    assert f"<#{CHANNEL}>: ~100 tokens" in str(publish["view"]["blocks"])


SUMMARY = """**Outcome**: tiered pricing.

**Worth remembering**
- Pricing has three tiers: free, team and enterprise.
- Alice owns the pricing page.
"""


def test_a_merge_asks_for_conclusions_and_its_post_offers_each_to_remember_linked_to_the_fork(bot, slack, claude):
    fork_request(bot, claude, "", "pricing")
    root = bot.fork_root(1)
    claude.script(Script(text=SUMMARY))
    bot.slash("/merge", "1")
    [post] = wait_until(lambda: [p for p in slack.posts(CHANNEL, top_level=True) if "merged fork" in p.get("text", "")])
    assert "Worth remembering" in last_user_text(claude.requests[-1])  # the merge request asks for them
    buttons = [b["accessory"] for b in post["blocks"] if b.get("accessory", {}).get("text", {}).get("text") == "Remember"]
    assert len(buttons) == 2
    bot.settled()
    bot.click("threadfork_memory_remember", buttons[0]["value"], message_ts=post.ts)
    [note] = wait_until(lambda: remembered(slack), message="the remembered note")
    assert "fork #1" in note["text"] and "three tiers" in note["text"]
    bot.click("threadfork_memory_remember", buttons[0]["value"], message_ts=post.ts)  # pressed twice: once
    assert "three tiers: free, team and enterprise" in system_text(ask_parent(bot, claude, "what tiers?"))
    assert len(remembered(slack)) == 1
    bot.slash("/threadfork", "memory")
    [modal] = wait_until(lambda: [v for v in slack.opened_views() if "memory" in v.view["callback_id"]])
    assert f"p{root.replace('.', '')}" in str(modal.view["blocks"])  # linked to the fork's thread


@pytest.mark.settings(threadfork_merge_review="on")
def test_with_review_on_the_draft_shows_the_conclusions_to_remember(bot, slack, claude):
    fork_request(bot, claude, "", "pricing")
    root = bot.fork_root(1)
    claude.script(Script(text=SUMMARY))
    bot.slash("/merge", "1")
    [draft] = wait_until(lambda: [p for p in slack.posts(CHANNEL, top_level=False)
                                  if p.get("thread_ts") == root and "Draft " in p.get("text", "")])
    remember_buttons = [b for b in draft["blocks"] if b.get("accessory", {}).get("action_id") ==
                        "threadfork_memory_remember"]
    assert len(remember_buttons) == 2 and "Alice owns the pricing page." in str(remember_buttons[1])


def test_workspace_memory_is_written_by_admins_and_seen_in_every_channel(bot, slack, claude):
    bot.say("UALICE01", "remember --workspace our fiscal year starts in April", mention=True)
    wait_until(lambda: [r for r in ephemerals(slack) if "workspace's memory" in r.get("text", "")])
    user = admin(slack)
    remember(bot, slack, "--workspace our fiscal year starts in April", user=user)
    before = len(claude.requests)
    bot.say("UALICE01", "when does the year start?", mention=True, channel="C0OTHER01")
    wait_until(lambda: len(claude.requests) > before, message="the other channel's request")
    assert "our fiscal year starts in April" in system_text(claude.requests[-1])


def test_claude_views_edits_and_deletes_memory_files_over_several_calls_within_one_answer(bot, slack, claude):
    memory_tool_on(bot, slack)
    remember(bot, slack)
    bot.settled()
    [entry] = bot.store.memories.entries(GENERAL)
    claude.script(Script(memory=[{"command": "view", "path": "/memories"}]),
                  Script(memory=[{"command": "str_replace", "path": entry.file, "old_str": "14 March",
                                  "new_str": "21 March"}]),
                  Script(memory=[{"command": "delete", "path": "/memories/missing.md"}]),
                  Script(text="Moved to 21 March."))
    before = len(claude.requests)
    bot.say("UALICE01", "the launch moved a week later", mention=True)
    wait_until(lambda: len(claude.requests) >= before + 4, message="three tool rounds and the answer")
    bot.settled()
    rounds = claude.requests[before:before + 4]
    results = [[b for b in r["messages"][-1]["content"] if b["type"] == "tool_result"] for r in rounds[1:]]
    assert entry.file in results[0][0]["content"] and not results[0][0].get("is_error")
    assert "edited" in results[1][0]["content"] and results[2][0]["is_error"] is True
    assert [m["role"] for m in rounds[3]["messages"][-6:]] == ["assistant", "user"] * 3
    assert bot.store.memories.entry(entry.id).text == "the launch is on 21 March" and not claude.rejections
    assert any("Moved to 21 March." in p.get("text", "") for p in slack.posts(CHANNEL, top_level=True))
