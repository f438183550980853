"""Every fork's thread is a Slack agent session (docs.slack.dev/ai/agent-sessions), through the fakes: made
when the fork opens with its title and opener, `processing` around each answer and `active` after it (said
by the answer's chat.stopStream, Slack's default, or by a call where the stream broke), renamed by its first
message when it had no topic, `closed` once merged or abandoned — child forks and adopted threads too; a
workspace whose Slack refuses the calls works exactly as before, with one log line."""
import logging

from ..fakes.anthropic_api import Script
from ..harness import CHANNEL, wait_until
from .test_streaming import LONG


def session_of(slack, root, statuses, channel=CHANNEL):
    """The session once it has gone through `statuses` (the calls run off the answer's path)."""
    return wait_until(lambda: (s := slack.session(channel, root)) and s.statuses == statuses and s,
                      message=f"the session to go through {statuses}")


def status_calls(slack):
    return [c for c in slack.calls if c.method in ("agents.sessions.setStatus", "chat.startStream",
                                                   "chat.stopStream")]


def test_opening_a_fork_makes_its_thread_a_session_titled_by_its_topic_and_opened_by_its_opener(bot, slack, claude):
    bot.slash("/fork", "pricing tiers for schools", user="UALICE01")
    root = bot.fork_root()
    session = session_of(slack, root, ["active", "processing", "active"])  # its topic is answered at once
    [created, *_] = slack.calls_to("agents.sessions.setStatus")
    assert (created["channel_id"], created["thread_ts"], created["initiator_user_id"]) == (CHANNEL, root, "UALICE01")
    assert "pricing tiers for schools" in created["title"] and session.title == created["title"]
    # the answer is preceded by `processing`; its chat.stopStream leaves the session `active` (Slack's default)
    order = [c.method if c.method != "agents.sessions.setStatus" else c["status"] for c in status_calls(slack)]
    assert order == ["active", "processing", "chat.startStream", "chat.stopStream"]
    assert "session_status" not in slack.calls_to("chat.stopStream")[0].args


def test_each_answer_in_a_fork_is_processing_then_active(bot, slack, claude):
    bot.slash("/fork", "--fresh")
    root = bot.fork_root()
    for n in range(2):
        bot.say("UBOB0001", f"question {n}", thread_ts=root)
        session_of(slack, root, ["active"] + ["processing", "active"] * (n + 1))
    bot.quiesce()
    # one session call per answer: its `active` rides on the answer's last chat.stopStream
    assert [c["status"] for c in slack.calls_to("agents.sessions.setStatus")] == ["active", "processing", "processing"]


def test_a_long_answer_keeps_its_session_processing_from_page_to_page(bot, slack, claude):
    bot.slash("/fork", "--fresh")
    root = bot.fork_root()
    claude.script(Script(text=LONG, chunks=40))
    bot.say("UBOB0001", "write a lot", thread_ts=root)
    session = session_of(slack, root, ["active", "processing"] + ["processing"] * 2 + ["active"])
    stops = slack.calls_to("chat.stopStream")
    assert len(stops) == 3  # three pages: no Stop button lost between them, none left after
    assert [c.args.get("session_status") for c in stops] == ["processing", "processing", None]
    assert session.status == "active"


def test_an_answer_whose_stream_broke_says_active_itself(bot, slack, claude):
    bot.slash("/fork", "--fresh")
    root = bot.fork_root()
    claude.script(Script(text="Alpha bravo charlie delta echo foxtrot golf hotel.", chunks=5, chunk_delay=0.5))
    slack.fail("chat.appendStream", status=500)  # the rest of the answer is posted and updated instead
    bot.say("UBOB0001", "a question", thread_ts=root)
    session_of(slack, root, ["active", "processing", "processing", "active"])
    [handover] = slack.calls_to("chat.stopStream")
    assert handover.args["session_status"] == "processing"  # more of the answer was still to come
    assert [c["status"] for c in slack.calls_to("agents.sessions.setStatus")] == ["active", "processing", "active"]


def test_a_fork_without_a_topic_is_renamed_by_the_first_line_of_its_first_message(bot, slack, claude):
    bot.slash("/fork")
    root = bot.fork_root()
    assert session_of(slack, root, ["active"]).title == "Fork #1"
    bot.say("UBOB0001", "  should we   move to Postgres?  \nmore detail here", thread_ts=root)
    session = session_of(slack, root, ["active", "processing", "active"])
    assert session.titles == ["Fork #1", "#1 should we move to Postgres?"]
    bot.say("UBOB0001", "a second message", thread_ts=root)
    session_of(slack, root, ["active", "processing", "active", "processing", "active"])
    assert len(slack.calls_to("agents.sessions.rename")) == 1  # only its first message names it


def test_a_long_topic_gives_a_title_of_at_most_two_hundred_characters(bot, slack, claude):
    bot.slash("/fork", "--fresh " + "word " * 100)
    root = bot.fork_root()
    title = session_of(slack, root, ["active", "processing", "active"]).title  # its topic is its first turn
    assert len(title) <= 200 and title.startswith("#1 word word") and title.endswith("…")


def test_merging_or_abandoning_a_fork_closes_its_session(bot, slack, claude):
    bot.slash("/fork", "--fresh merge me")
    merged = bot.fork_root()
    session_of(slack, merged, ["active", "processing", "active"])
    bot.react("UCAROL01", merged)
    assert session_of(slack, merged, ["active", "processing", "active", "closed"])
    bot.slash("/fork", "--fresh")
    abandoned = bot.fork_root(number=2)
    bot.react("UCAROL01", abandoned, "x")
    assert session_of(slack, abandoned, ["active", "closed"])


def test_a_child_fork_and_an_adopted_thread_are_sessions_too(bot, slack, claude):
    bot.slash("/fork", "--fresh")
    root = bot.fork_root()
    bot.say("UALICE01", "fork --fresh a deeper question", thread_ts=root, mention=True)
    child = bot.fork_root(number=2)
    session_of(slack, child, ["active", "processing", "active"])
    assert "a deeper question" in slack.session(CHANNEL, child).title
    thread = bot.say("UDAVE001", "a thread people began about caching")
    bot.say("UDAVE001", "what do you think?", thread_ts=thread, mention=True)
    adopted = session_of(slack, thread, ["active", "processing", "active"])
    assert adopted.title == "#3 a thread people began about caching" and adopted.initiator == "UDAVE001"


def test_a_workspace_that_refuses_session_calls_works_as_before_with_one_log_line(bot, slack, claude, caplog):
    slack.team().scopes = ("app_mentions:read", "chat:write", "commands", "users:read")  # no assistant:write
    caplog.set_level(logging.INFO, logger="bot.slack.agent_sessions")
    claude.script(Script(text="an answer all the same"))
    bot.slash("/fork", "--fresh a question")
    root = bot.fork_root()
    wait_until(lambda: any(m.shown == "an answer all the same" for m in slack.posts(CHANNEL, top_level=False)))
    wait_until(lambda: slack.refusals, message="the refused session call")
    bot.slash("/fork", "--fresh another")
    bot.fork_root(number=2)
    bot.say("UBOB0001", "and a turn", thread_ts=root)
    wait_until(lambda: len([m for m in slack.posts(CHANNEL, top_level=False) if not m.streaming]) == 3)
    bot.quiesce()
    refused = [r for r in slack.refusals if r.method.startswith("agents.")]
    assert [r.error for r in refused] == ["missing_scope"]  # remembered: no call after the first refusal
    lines = [r for r in caplog.records if "refused" in r.getMessage()]
    assert len(lines) == 1 and "missing_scope" in lines[0].getMessage() and lines[0].levelno == logging.WARNING
    assert slack.session(CHANNEL, root) is None


def test_a_plan_without_agent_sessions_is_remembered_after_its_first_refusal(bot, slack, claude, caplog):
    caplog.set_level(logging.WARNING, logger="bot.slack.agent_sessions")
    slack.fail("agents.sessions.setStatus", "not_allowed", times=100)  # Slack's answer on an older plan
    bot.slash("/fork", "--fresh one")
    root = bot.fork_root()
    bot.slash("/fork", "--fresh two")
    bot.fork_root(number=2)
    wait_until(lambda: len([m for m in slack.posts(CHANNEL, top_level=False) if not m.streaming]) == 2)
    bot.quiesce()
    assert len(slack.calls_to("agents.sessions.setStatus")) == 1 and slack.session(CHANNEL, root) is None
    assert [r.getMessage().count("not_allowed") for r in caplog.records] == [1]


def test_a_fork_merged_or_abandoned_while_it_answers_ends_closed(bot, slack, claude):
    for n, reaction in enumerate(("white_check_mark", "x"), start=1):
        bot.slash("/fork", "--fresh")
        root = bot.fork_root(number=n)
        claude.script(Script(text="a long answer " * 20, chunks=20, chunk_delay=0.15))  # ~3 s
        bot.say("UBOB0001", "tell me everything", thread_ts=root)
        # the session is opened off the fork's path: it may not exist yet when the answer begins
        wait_until(lambda: (s := slack.session(CHANNEL, root)) and s.status == "processing",
                   message="the answer under way")
        bot.react("UALICE01", root, reaction)  # closed while the answer is still streaming
        wait_until(lambda: slack.session(CHANNEL, root).status == "closed", message="the session closed")
        wait_until(lambda: not bot.busy(), timeout=15, message="the answer over")
        bot.settled()
        assert slack.session(CHANNEL, root).statuses[-1] == "closed"  # no `active` after it
        if reaction == "x":  # abandoned: the answer's own end says closed (not Slack's default)
            assert slack.calls_to("chat.stopStream")[-1].args["session_status"] == "closed"
        else:  # a merge waits for the answer (invariant 13): the session closes once it was recorded and merged
            stop, closing = slack.calls_to("chat.stopStream")[-1], slack.calls_to("agents.sessions.setStatus")[-1]
            assert closing["status"] == "closed" and closing.at > stop.at


def test_a_workspace_where_the_agent_feature_is_off_is_remembered_and_its_forks_show_thinking(bot, slack, claude,
                                                                                             caplog):
    slack.agent_feature_off()  # session calls answer feature_disabled
    caplog.set_level(logging.WARNING, logger="bot.slack.agent_sessions")
    bot.slash("/fork", "--fresh")
    root = bot.fork_root()
    wait_until(lambda: slack.refusals, message="the refused session call")
    claude.script(Script(text="a slow start then words", chunks=4, chunk_delay=1.0))
    ts = bot.say("UBOB0001", "think about it", thread_ts=root)  # no rename, no processing: remembered
    wait_until(lambda: slack.calls_to("chat.stopStream"), timeout=15)
    bot.settled()
    # no session says Claude is at work, so the 👀 reaction does
    wait_until(lambda: slack.calls_to("reactions.remove"), message="the reaction's removal")
    assert slack.calls_to("reactions.add")[0].args == {"channel": CHANNEL, "timestamp": ts, "name": "eyes"}
    assert [(r.method, r.error) for r in slack.refusals] == [("agents.sessions.setStatus", "feature_disabled")]
    assert [r.getMessage().count("feature_disabled") for r in caplog.records] == [1]
    assert slack.session(CHANNEL, root) is None


def test_an_app_slack_says_is_no_agent_app_sends_no_session_calls_after_its_prompts_were_refused(bot, slack, claude):
    slack.agent_feature_off()  # suggested prompts answer not_agent_app
    assert bot.open_dm("UALICE01", dm="D0ALICE001").status == 200
    wait_until(lambda: slack.refusals, message="the refused suggested prompts")
    bot.slash("/fork", "--fresh")
    root = bot.fork_root()
    bot.say("UBOB0001", "a turn", thread_ts=root)
    wait_until(lambda: slack.calls_to("chat.stopStream"), timeout=15)
    bot.quiesce()
    assert [(r.method, r.error) for r in slack.refusals] == [("assistant.threads.setSuggestedPrompts", "not_agent_app")]
    assert not [c for c in slack.calls if c.method.startswith("agents.")] and slack.session(CHANNEL, root) is None


def test_a_hostile_topic_or_first_message_names_a_session_without_a_mention_or_a_disguised_link(bot, slack, claude):
    bot.slash("/fork", "<!channel> see <https://evil.example/x|https://docs.example.com>", user="UALICE01")
    root = bot.fork_root()
    session = session_of(slack, root, ["active", "processing", "active"])
    assert "<!channel>" not in session.title and "|" not in session.title
    assert "https://docs.example.com (https://evil.example/x)" in session.title
    bot.slash("/fork")
    second = bot.fork_root(2)
    bot.say("UBOB0001", "<!here> [docs.example.com](https://evil.example)", thread_ts=second)
    renamed = session_of(slack, second, ["active", "processing", "active"])
    assert "<!here>" not in renamed.title and "docs.example.com (https://evil.example)" in renamed.title
