"""A merge never loses the answer in flight (DESIGN invariant 13, issue 32): a merge gesture on a fork whose
answer Claude is still streaming waits for that answer to be recorded — the root says so meanwhile — and then
asks for one summary that holds it. After the merge's post nothing more appears in the fork's thread but the
merge's own note, and the fork's agent session closes only then. Several presses make one merge."""
from ..fakes.anthropic_api import Script, is_merge_request, request_texts
from ..harness import CHANNEL, GENERAL, at_once, wait_until
from .test_merge import merge_requests, summaries
from .test_socket_mode import people, socket_mode, started  # noqa: F401 - fixtures

SLOW = Script(text=" ".join(f"word{n}" for n in range(80)), chunks=40, chunk_delay=0.1)  # ~4 s of deltas
WAITING = "waiting for Claude to finish its answer"


def streaming(slack, root: str) -> list:
    """The answer's words reaching the thread: a stream started there and appended to."""
    streams = [m.ts for m in slack.posts(CHANNEL, top_level=False) if m.get("thread_ts") == root
               and m.method == "chat.startStream"]
    return [c for c in slack.calls_to("chat.appendStream") if c["ts"] in streams]


def assert_nothing_after_the_merge_but_its_note(slack, root: str, summary) -> None:
    """Every message of the fork's thread but the merge's note was created, and last changed, before the
    summary was posted; the note is the thread's last message."""
    thread = [m for m in slack.posts(CHANNEL, top_level=False) if m.get("thread_ts") == root]
    [note] = [m for m in thread if "merged this fork into the channel" in m.get("text", "")]
    assert thread[-1] is note and note.created > summary.created
    for message in thread:
        if message is not note:
            assert not message.streaming
            assert message.created < summary.created and all(at < summary.created for at in message.updates), \
                f"{message.method} {message.ts} changed after the merge's post"


def test_a_check_while_the_forks_answer_streams_waits_for_it_and_summarizes_it(bot, slack, claude):
    bot.slash("/fork", "--fresh")
    root = bot.fork_root()
    claude.script(SLOW, Script(text="Decision: ship the tiers.", usage={"output_tokens": 9}))
    bot.say("UALICE01", "explain the pricing options at length", thread_ts=root)
    wait_until(lambda: streaming(slack, root), message="the answer streaming")
    pressed = len(claude.requests)
    assert bot.react("UCAROL01", root).status == 200
    wait_until(lambda: [c for c in slack.calls_to("chat.update") if c["ts"] == root and WAITING in str(c["blocks"])],
               message="the root saying the merge waits")
    assert len(claude.requests) == pressed  # no summary asked for while the answer streams
    [summary] = wait_until(lambda: summaries(slack), timeout=20, message="the summary post")
    bot.settled()
    [merge] = merge_requests(claude)
    assert SLOW.text in request_texts(merge)  # the whole answer, as recorded
    assert "<@UCAROL01> merged fork #1" in summary["blocks"][0]["text"]["text"]
    assert "2 turns" in summary["blocks"][0]["text"]["text"]
    assert_nothing_after_the_merge_but_its_note(slack, root, summary)
    session = slack.session(CHANNEL, root)
    assert session.statuses[-1] == "closed" and session.statuses.count("closed") == 1
    assert "processing" not in session.statuses[session.statuses.index("closed"):]
    fork = bot.store.sessions.fork_by_message(GENERAL, root)
    assert fork.status.value == "merged" and not slack.calls_to("chat.postEphemeral")
    final = [c for c in slack.calls_to("chat.update") if c["ts"] == root][-1]
    assert "Merged" in str(final["blocks"]) and WAITING not in str(final["blocks"])


def test_three_merge_presses_during_a_forks_first_answer_make_one_merge_that_holds_the_answer(bot, slack, claude):
    claude.script(SLOW)
    bot.slash("/fork", "--fresh pricing tiers")
    root = bot.fork_root()
    wait_until(lambda: streaming(slack, root), message="the first answer streaming")
    fork = bot.store.sessions.fork_by_message(GENERAL, root)
    at_once(*[lambda user=user: bot.click("fork_merge", str(fork.id), message_ts=root, user=user)
              for user in ("UALICE01", "UBOB0001", "UCAROL01")])
    [summary] = wait_until(lambda: summaries(slack), timeout=20, message="the summary post")
    bot.settled()
    [merge] = merge_requests(claude)
    assert SLOW.text in request_texts(merge) and "pricing tiers" in request_texts(merge)[1]
    assert "2 turns" in summary["blocks"][0]["text"]["text"]
    told = [c["text"] for c in slack.calls_to("chat.postEphemeral")] + [r["text"] for r in slack.responses]
    assert len(told) == 2 and all("already being merged" in t for t in told), told
    assert not any("no turns yet" in t for t in told)
    assert_nothing_after_the_merge_but_its_note(slack, root, summary)
    parent = bot.store.turns.turns(fork.parent_id)
    assert [t.role.value for t in parent].count("summary") == 1


def test_slash_merge_while_claude_answers_says_it_waits_and_keeps_the_guidance_for_the_summary(bot, slack, claude):
    bot.slash("/fork", "--fresh")
    root = bot.fork_root()
    claude.script(SLOW)
    bot.say("UALICE01", "go through every option", thread_ts=root)
    wait_until(lambda: streaming(slack, root), message="the answer streaming")
    bot.slash("/merge", "1 keep only the final numbers", user="UBOB0001")
    [told] = wait_until(lambda: slack.responses, message="the private answer")
    assert told["response_type"] == "ephemeral" and "as soon as Claude finishes" in told["text"]
    wait_until(lambda: summaries(slack), timeout=20, message="the summary post")
    bot.settled()
    [merge] = merge_requests(claude)
    assert "Their guidance for the summary: keep only the final numbers" in request_texts(merge)[-1]
    assert SLOW.text in request_texts(merge)


def test_a_message_sent_before_the_merge_is_answered_and_summarized_one_sent_after_it_is_not(bot, slack, claude):
    bot.slash("/fork", "--fresh")
    root = bot.fork_root()
    claude.script(SLOW)
    bot.say("UALICE01", "first question", thread_ts=root)
    wait_until(lambda: streaming(slack, root), message="the answer streaming")
    bot.say("UBOB0001", "and a second one, queued", thread_ts=root)
    fork = bot.store.sessions.fork_by_message(GENERAL, root)
    wait_until(lambda: [t for t in bot.store.turns.turns(fork.id) if t.text == "and a second one, queued"],
               message="the second message kept")
    bot.react("UCAROL01", root)
    wait_until(lambda: [c for c in slack.calls_to("chat.update") if c["ts"] == root and WAITING in str(c["blocks"])],
               message="the root saying the merge waits")
    bot.say("UDAVE001", "too late for the summary", thread_ts=root)
    [notice] = wait_until(lambda: slack.calls_to("chat.postEphemeral"), message="the notice to the late writer")
    assert notice["user"] == "UDAVE001" and "merged" in notice["text"]
    [summary] = wait_until(lambda: summaries(slack), timeout=20, message="the summary post")
    bot.settled()
    [merge] = merge_requests(claude)
    texts = " ".join(request_texts(merge))
    assert SLOW.text in texts and "and a second one, queued" in texts and "Answer 2" in texts
    assert "too late for the summary" not in texts and not is_merge_request(claude.requests[-2])
    assert_nothing_after_the_merge_but_its_note(slack, root, summary)


def test_over_socket_mode_a_check_during_the_first_answer_waits_for_it_and_merges_once(started, people, slack,
                                                                                        claude):
    started()
    claude.script(SLOW, Script(text="Decision: ship the tiers."))
    assert people.slash("/fork", "--fresh pricing tiers").status == 200
    [root] = wait_until(lambda: [p for p in slack.posts(CHANNEL, top_level=True) if "Fork #1" in str(p["blocks"])],
                        timeout=15, message="the fork root")
    wait_until(lambda: streaming(slack, root.ts), timeout=15, message="the first answer streaming")
    assert people.react("UCAROL01", root.ts).status == 200
    [summary] = wait_until(lambda: summaries(slack), timeout=30, message="the summary post")
    wait_until(lambda: [c for c in slack.calls_to("chat.update") if c["ts"] == root.ts and "Merged" in str(c["blocks"])],
               timeout=15, message="the root shown merged")
    [merge] = [r for r in claude.requests if is_merge_request(r)]
    assert SLOW.text in request_texts(merge) and "Decision: ship the tiers." in summary.shown
    assert [c for c in slack.calls_to("chat.update") if c["ts"] == root.ts and WAITING in str(c["blocks"])]
    assert_nothing_after_the_merge_but_its_note(slack, root.ts, summary)
