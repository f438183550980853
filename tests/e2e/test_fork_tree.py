"""Forks of forks (merges bubble up one level each) and conflict notices, end to end."""
from ..fakes.anthropic_api import Script, is_merge_request, last_user_text, request_texts
from ..harness import CHANNEL, GENERAL, wait_until


def talk(bot, slack, text, *, thread_ts=None, mention=False, user="UBOB0001"):
    """Say something and wait for the bot to be done with it."""
    bot.say(user, text, thread_ts=thread_ts, mention=mention)
    bot.settled()


def fork_of(bot, slack, parent_root, text, number):
    """`@Threadfork fork <text>` in a fork's thread; the new fork's root."""
    talk(bot, slack, f"fork {text}", thread_ts=parent_root, mention=True)
    return bot.fork_root(number)


def merged(slack, number):
    return [p for p in slack.posts(CHANNEL) if f"merged fork #{number}" in p.get("text", "")]


def test_forks_of_forks_nest_three_deep_and_their_summaries_bubble_up_one_level_each(bot, slack, claude):
    talk(bot, slack, "we are choosing a database", mention=True)
    bot.slash("/fork", "databases")
    one = bot.fork_root(1)
    bot.settled()
    talk(bot, slack, "compare postgres and sqlite", thread_ts=one)
    parent_fork_request = claude.requests[-1]
    two = fork_of(bot, slack, one, "--inherit try postgres in depth", 2)
    root_two = next(p for p in slack.posts(CHANNEL, top_level=True) if p.ts == two)
    assert "Fork #2 — from fork #1" in root_two["text"]
    first_of_two = next(r for r in claude.requests if "try postgres in depth" in last_user_text(r))
    inherited = request_texts(parent_fork_request)
    assert request_texts(first_of_two)[:len(inherited)] == inherited  # byte for byte: its parent's cache
    three = fork_of(bot, slack, two, "tune the indexes", 3)
    assert bot.store.sessions.fork_by_message(GENERAL, three).depth == 3

    talk(bot, slack, "fork go deeper", thread_ts=three, mention=True, user="UCAROL01")
    refusal = [c for c in slack.calls_to("chat.postEphemeral") if c["user"] == "UCAROL01"]
    assert len(refusal) == 1 and "at most 3 deep" in refusal[0]["text"] and refusal[0]["thread_ts"] == three
    assert bot.store.sessions.fork_by_number(GENERAL, 4) is None

    bot.react("UALICE01", one)  # fork #1 still has fork #2 open
    wait_until(lambda: [c for c in slack.calls_to("chat.postEphemeral") if c["user"] == "UALICE01"],
               message="the refusal")  # nothing is stored first: a quiet moment is no sign it was handled
    bot.settled()
    [blocked] = [c for c in slack.calls_to("chat.postEphemeral") if c["user"] == "UALICE01"]
    assert "#2" in blocked["text"] and "still open" in blocked["text"]
    buttons = [e for b in blocked["blocks"] if b["type"] == "actions" for e in b["elements"]]
    two_id = str(bot.store.sessions.fork_by_number(GENERAL, 2).id)
    assert [(e["action_id"], e["value"]) for e in buttons] == [("fork_merge", two_id), ("fork_abandon", two_id)]
    assert not merged(slack, 1) and not any(is_merge_request(r) for r in claude.requests)

    for number, root, into in ((3, three, two), (2, two, one), (1, one, None)):
        claude.script(Script(text=f"SUMMARY OF FORK {number}"))
        bot.react("UALICE01", root)
        [post] = wait_until(lambda: merged(slack, number), message=f"fork #{number}'s summary")
        bot.settled()
        assert post.get("thread_ts") == into  # the parent fork's thread, or the channel's top level
    merge_of_two = [r for r in claude.requests if is_merge_request(r)][1]
    assert any("SUMMARY OF FORK 3" in t for t in request_texts(merge_of_two))  # #2 knew #3's outcome
    talk(bot, slack, "so which database?", mention=True, user="UALICE01")
    channel_request = request_texts(claude.requests[-1])
    assert any("SUMMARY OF FORK 1" in t for t in channel_request)
    assert not any("SUMMARY OF FORK 2" in t or "SUMMARY OF FORK 3" in t for t in channel_request)


def test_forks_lists_the_tree(bot, slack, claude):
    bot.slash("/fork", "top")
    top = bot.fork_root(1)
    bot.settled()
    fork_of(bot, slack, top, "child", 2)
    bot.slash("/forks")
    [listing] = wait_until(lambda: [r for r in slack.responses if "Open forks" in r.get("text", "")])
    lines = listing["text"].splitlines()
    assert lines[1].startswith("• *#1*") and lines[2].startswith("\u2003↳ *#2*")


def test_a_second_fork_from_one_point_is_asked_about_the_first_and_its_conflicts_shown(bot, slack, claude):
    talk(bot, slack, "we need a queue", mention=True, user="UALICE01")
    bot.slash("/fork", "redis")
    one = bot.fork_root(1)
    bot.slash("/fork", "postgres")
    two = bot.fork_root(2)
    bot.settled()
    claude.script(Script(text="Decision: Redis streams."))
    bot.react("UALICE01", one)
    wait_until(lambda: merged(slack, 1))
    bot.settled()
    claude.script(Script(text="Decision: a Postgres table.\n\n## Conflicts\n- Fork #1: we chose Postgres, "
                              "fork #1 chose Redis streams"))
    bot.react("UALICE01", two)
    [post] = wait_until(lambda: merged(slack, 2))
    bot.settled()
    first, second = [r for r in claude.requests if is_merge_request(r)]
    assert "Conflicts" not in last_user_text(first)
    asked = last_user_text(second)
    assert "Fork #1" in asked and "Decision: Redis streams." in asked and "`Conflicts`" in asked
    sections = [b["text"]["text"] for b in post["blocks"] if b["type"] == "section"]
    assert sections[-1] == "⚠️ Conflicts with fork #1: we chose Postgres, fork #1 chose Redis streams"
    assert "Conflicts" not in next(b["text"] for b in post["blocks"] if b["type"] == "markdown")
    talk(bot, slack, "what did we decide?", mention=True, user="UALICE01")
    assert any("⚠️ Conflicts with fork #1: we chose Postgres" in t for t in request_texts(claude.requests[-1]))
