"""Any thread adopted, end to end through the fakes: a mention in a channel thread that is no fork
makes it an inherited fork, read once with conversations.replies, answered in the thread, and
mergeable with ✅ like any fork — while ordinary turns still read nothing from Slack."""
from bot.domain.model import ForkStatus

from ..fakes.anthropic_api import request_texts as _texts
from ..harness import CHANNEL, GENERAL, at_once, wait_until

NAMES = {"UALICE01": "alice", "UBOB0001": "bob", "UCAROL01": "carol", "UDAVE001": "dave"}


def request_texts(request: dict) -> list[str]:
    """The request's text blocks after the system prompt."""
    return _texts(request)[1:]


def talk_in_parent(bot, slack, text, user="UALICE01"):
    before = len(slack.posts(CHANNEL, top_level=True))
    bot.say(user, text, mention=True)
    wait_until(lambda: len(slack.posts(CHANNEL, top_level=True)) == before + 1, message="parent reply")
    bot.settled()
    return slack.posts(CHANNEL, top_level=True)[-1]


def thread_posts(slack, root):
    return [p for p in slack.posts(CHANNEL, top_level=False) if p.get("thread_ts") == root]


def answers_in(slack, root):
    return [p for p in thread_posts(slack, root) if "This thread is now fork" not in (p.get("text") or "")]


def adoption_notes(slack, root):
    return [p for p in thread_posts(slack, root) if "This thread is now fork" in (p.get("text") or "")]


def test_a_persons_thread_becomes_a_fork_that_knows_the_thread_and_merges_into_the_channel(bot, slack, claude):
    slack.names.update(NAMES)
    talk_in_parent(bot, slack, "we launch in June")
    root = bot.say("UBOB0001", "should we move the launch?")
    plan = slack.share_file("plan.pdf", b"%PDF-1.4 not read", "application/pdf")
    bot.say("UCAROL01", "I'd say yes", thread_ts=root, files=[plan])
    talk_in_parent(bot, slack, "said after the thread began")
    bot.settled()
    assert len(claude.requests) == 2  # the thread's chatter called nobody

    bot.say("UDAVE001", "what do you think?", thread_ts=root, mention=True)  # message + app_mention
    wait_until(lambda: answers_in(slack, root), message="the answer in the thread")
    bot.settled()

    [read] = slack.calls_under("conversations.")
    assert (read.method, read["channel"], read["ts"]) == ("conversations.replies", CHANNEL, root)
    [note] = adoption_notes(slack, root)
    assert "fork #1" in note["text"] and "✅" in note["text"]
    fork = bot.store.sessions.fork_by_number(GENERAL, 1)
    assert fork.adopted and fork.root_ts == root and fork.topic == "should we move the launch?"
    assert slack.downloads_of(plan["id"]) == []  # named, never downloaded
    texts = request_texts(claude.requests[2])
    assert texts[:2] == ["[alice <@UALICE01>]\nwe launch in June", "Answer 1"]
    assert "[bob <@UBOB0001>]\nshould we move the launch?\n\n[carol <@UCAROL01>]\nI'd say yes\n" \
           "[shared 1 file, not read: plan.pdf]" in texts[3]
    assert texts[-1] == "[dave <@UDAVE001>]\nwhat do you think?"
    assert not any("said after the thread began" in t for t in texts)
    assert len(claude.requests) == 3 and len(adoption_notes(slack, root)) == 1  # answered once

    talk_in_parent(bot, slack, "back to the launch")
    parent = request_texts(claude.requests[-1])
    assert not any("should we move" in t or "I'd say yes" in t for t in parent)

    bot.react("UALICE01", root)  # ✅ on the thread's root, a person's message
    summary = wait_until(lambda: [p for p in slack.posts(CHANNEL, top_level=True)
                                  if "merged fork #1" in p.get("text", "")], message="the merge post")
    bot.settled()
    assert bot.store.sessions.fork(fork.id).status is ForkStatus.MERGED and summary
    assert [c for c in slack.calls_to("chat.update") if c["ts"] == root] == []  # the root is theirs, untouched
    talk_in_parent(bot, slack, "what did we decide?")
    assert any(t.startswith("[Merged fork #1 about “should we move the launch?”")
               for t in request_texts(claude.requests[-1]))
    assert len(slack.calls_under("conversations.")) == 1  # ordinary turns read nothing


def test_a_thread_under_a_bot_answer_is_adopted_alike(bot, slack, claude):
    slack.names.update(NAMES)
    answer = talk_in_parent(bot, slack, "draft a launch plan")
    bot.say("UBOB0001", "too long", thread_ts=answer.ts)
    bot.settled()
    assert slack.calls_under("conversations.") == [] and len(claude.requests) == 1

    bot.say("UBOB0001", "shorten it", thread_ts=answer.ts, mention=True)
    wait_until(lambda: answers_in(slack, answer.ts), message="the answer in the thread")
    bot.settled()

    fork = bot.store.sessions.fork_by_number(GENERAL, 1)
    assert fork.adopted and fork.root_ts == answer.ts and fork.fork_point_seq == 1
    assert len(slack.calls_to("conversations.replies")) == 1 and len(adoption_notes(slack, answer.ts)) == 1
    texts = request_texts(claude.requests[-1])
    assert texts[0] == "[alice <@UALICE01>]\ndraft a launch plan"
    assert "[Threadfork (you)]\nAnswer 1\n\n[bob <@UBOB0001>]\ntoo long" in texts[2]
    assert texts[-1] == "[bob <@UBOB0001>]\nshorten it"


def test_two_people_mentioning_the_bot_in_a_thread_at_once_make_one_adoption(bot, slack, claude):
    root = bot.say("UBOB0001", "an idea worth a fork")
    at_once(lambda: bot.say("UCAROL01", "yes or no?", thread_ts=root, mention=True),
            lambda: bot.say("UDAVE001", "and why?", thread_ts=root, mention=True))
    def answered_twice() -> bool:
        fork = bot.store.sessions.fork_by_number(GENERAL, 1)  # None until the adoption is under way
        return fork is not None and len(bot.store.turns.turns(fork.id)) >= 4

    wait_until(answered_twice, message="both mentions answered")
    bot.settled()

    assert [f.number for f in bot.store.sessions.forks_in(GENERAL, ForkStatus.OPEN)] == [1]
    assert len(slack.calls_to("conversations.replies")) == 1 and len(adoption_notes(slack, root)) == 1
    for request in claude.requests:  # every answer saw the thread's first message first
        assert "an idea worth a fork" in request_texts(request)[0]
    asked = [t for r in claude.requests for t in request_texts(r)]
    assert any(t.endswith("\nyes or no?") for t in asked) and any(t.endswith("\nand why?") for t in asked)


def test_abandoning_an_adopted_thread_leaves_its_root_alone(bot, slack, claude):
    root = bot.say("UBOB0001", "an idea")
    bot.say("UCAROL01", "thoughts?", thread_ts=root, mention=True)
    wait_until(lambda: answers_in(slack, root), message="the answer in the thread")
    bot.settled()
    bot.react("UBOB0001", root, "x")
    wait_until(lambda: bot.store.sessions.fork_by_number(GENERAL, 1).status is ForkStatus.ABANDONED)
    bot.settled()
    assert [c for c in slack.calls_to("chat.update") if c["ts"] == root] == []
    assert any("abandoned this fork" in (p.get("text") or "") for p in thread_posts(slack, root))


def test_a_long_thread_is_read_page_by_page_each_message_once_with_other_apps_named(bot, slack, claude):
    root = bot.say("UBOB0001", "the incident log")
    for n in range(1, 251):  # already in Slack before the bot was asked: nobody delivers them again
        slack.record_message({"type": "message", "channel": CHANNEL, "user": "UCAROL01", "text": f"entry {n}",
                              "ts": slack.next_ts(), "thread_ts": root})
    bot.other_app_says("deploy 42 finished", username="ci-bot", thread_ts=root)
    bot.say("UDAVE001", "summarise the incident", thread_ts=root, mention=True)
    wait_until(lambda: answers_in(slack, root), message="the answer in the thread")
    bot.settled()

    pages = slack.calls_to("conversations.replies")
    assert len(pages) == 2 and "cursor" not in pages[0].args and pages[1]["cursor"]
    [opening] = [t for t in request_texts(claude.requests[-1]) if "the incident log" in t]
    assert opening.count("the incident log") == 1  # the root heads every page; it is kept once
    assert [int(line.split()[1]) for line in opening.splitlines() if line.startswith("entry ")] == list(range(1, 251))
    assert "[ci-bot]\ndeploy 42 finished" in opening
