"""The agent pane, through the fakes: a person writing in the bot's DM while viewing a channel forks that
channel privately. Its first request holds the channel's conversation, the channel's never holds its turns,
its summary reaches the channel only once its owner approves the draft (review is always on), abandoning
shares nothing, and nobody else can tell it exists. Non-members get one private refusal; without a channel
in view the DM works as always; opening the DM suggests prompts."""
import pytest

from ..fakes.anthropic_api import Script, is_merge_request, request_texts
from bot.domain.model import Channel

from ..harness import CHANNEL, GENERAL, TEAM_ID, wait_until

DM = "D0ALICE001"


def posts_in(slack, channel, thread_ts=None):
    return [m for m in slack.posts(channel) if thread_ts is None or m.get("thread_ts") == thread_ts]


def summaries(slack):
    return [p for p in slack.posts(CHANNEL, top_level=True) if "private fork" in p.get("text", "")]


def parent_texts_after_asking(bot, claude, question="what did we decide?"):
    before = len(claude.requests)
    bot.say("UBOB0001", question, mention=True)
    wait_until(lambda: len(claude.requests) == before + 1)
    bot.settled()
    return request_texts(claude.requests[-1])


@pytest.fixture
def channel_talk(bot, slack, claude):
    """#general, with Alice and Bob in it (and the bot), and a conversation there."""
    slack.add_room(CHANNEL, "general", ["UALICE01", "UBOB0001"])
    bot.say("UBOB0001", "we settled on Postgres for the launch", mention=True)
    wait_until(lambda: slack.posts(CHANNEL, top_level=True))
    bot.settled()
    return len(claude.requests)


def fork_privately(bot, slack, claude, text="what about pricing for schools?", user="UALICE01", dm=DM):
    before = len(claude.requests)
    bot.view_channel(user, CHANNEL, dm=dm)
    bot.settled()
    ts = bot.dm(user, text, dm=dm)
    wait_until(lambda: len(claude.requests) == before + 1, message="the private fork's first request")
    bot.settled()
    return ts


def test_a_dm_beside_a_channel_is_a_private_fork_that_starts_from_its_conversation(bot, slack, claude, channel_talk):
    root = fork_privately(bot, slack, claude)
    texts = request_texts(claude.requests[-1])
    assert any(t.endswith("\nwe settled on Postgres for the launch") for t in texts)  # the channel's turns
    assert texts[-1].endswith("\nwhat about pricing for schools?")
    assert any("private side session" in t for t in texts)
    thread = posts_in(slack, DM, root)
    assert [m for m in thread if m.method == "chat.startStream"]  # answered in the DM thread
    intro = next(m for m in thread if "Private fork of" in m.get("text", ""))
    labels = [e["text"]["text"] for b in intro["blocks"] if b["type"] == "actions" for e in b["elements"]]
    assert labels == ["Merge into #general", "Abandon"]
    assert not posts_in(slack, CHANNEL)[1:]  # nothing new in the channel
    fork = bot.store.sessions.fork(intro_fork_id(intro))
    assert (fork.private_of, fork.owner_id, fork.channel_id, fork.root_ts) == (CHANNEL, "UALICE01", DM, root)
    assert bot.store.sessions.fork_by_message(Channel(TEAM_ID, DM), root).id == fork.id
    session = wait_until(lambda: slack.session(DM, root), message="its agent session")
    assert session.initiator == "UALICE01" and "pricing for schools" in session.title


def intro_fork_id(intro) -> int:
    return int(next(e["value"] for b in intro["blocks"] if b["type"] == "actions" for e in b["elements"]))


def test_the_channels_conversation_never_holds_a_turn_of_the_private_fork(bot, slack, claude, channel_talk):
    root = fork_privately(bot, slack, claude, "secret plan: undercut the competition")
    bot.dm("UALICE01", "and a second secret", dm=DM, thread_ts=root)
    wait_until(lambda: len(claude.requests) == channel_talk + 2)
    bot.settled()
    texts = parent_texts_after_asking(bot, claude)
    assert not any("secret" in t for t in texts)
    assert not any("secret" in t.text for t in bot.store.turns.turns(bot.store.sessions.parent_id(GENERAL)))


def test_approving_the_draft_posts_one_summary_in_the_channel_and_its_next_request_holds_it(
        bot, slack, claude, channel_talk):
    root = fork_privately(bot, slack, claude)
    intro = next(m for m in posts_in(slack, DM, root) if "Private fork of" in m.get("text", ""))
    claude.script(Script(text="Schools get 40% off; decided with finance."))
    bot.click("fork_merge", message_ts=intro.ts, channel=DM, user="UALICE01")  # Merge into #general
    draft = wait_until(lambda: [m for m in posts_in(slack, DM, root) if "Draft " in m.get("text", "")],
                       message="the draft in the DM thread")[0]
    bot.settled()
    assert summaries(slack) == [] and "Schools get 40% off" in draft.shown  # shown privately first
    assert not any("40% off" in t for t in parent_texts_after_asking(bot, claude, "anything new?"))
    bot.click("draft_merge", message_ts=draft.ts, channel=DM, user="UALICE01")  # Merge as is
    [post] = wait_until(lambda: summaries(slack), message="the summary in the channel")
    bot.settled()
    assert "thread_ts" not in post.args and "<@UALICE01>'s private fork" in post["text"]
    assert "Schools get 40% off" in post.shown and "pricing for schools" not in str(post.args)  # no topic
    assert len(summaries(slack)) == 1 and sum(1 for r in claude.requests if is_merge_request(r)) == 1
    assert any("Schools get 40% off" in t for t in parent_texts_after_asking(bot, claude, "so what's the price?"))
    session = wait_until(lambda: slack.session(DM, root).status == "closed" and slack.session(DM, root))
    assert session.statuses[-1] == "closed"


def test_a_check_mark_in_the_dm_thread_drafts_too_and_nothing_reaches_the_channel_before_approval(
        bot, slack, claude, channel_talk):
    root = fork_privately(bot, slack, claude)
    bot.react("UALICE01", root, channel=DM)
    wait_until(lambda: [m for m in posts_in(slack, DM, root) if "Draft " in m.get("text", "")])
    bot.settled()
    assert summaries(slack) == []


def test_abandoning_a_private_fork_posts_nothing_in_the_channel(bot, slack, claude, channel_talk):
    root = fork_privately(bot, slack, claude)
    posted = len(slack.posts(CHANNEL))
    intro = next(m for m in posts_in(slack, DM, root) if "Private fork of" in m.get("text", ""))
    bot.click("fork_abandon", message_ts=intro.ts, channel=DM, user="UALICE01")
    wait_until(lambda: any("abandoned" in m.get("text", "") for m in posts_in(slack, DM, root)))
    bot.settled()
    assert len(slack.posts(CHANNEL)) == posted
    assert not any("pricing" in t for t in parent_texts_after_asking(bot, claude))


def test_nobody_else_can_tell_a_private_fork_exists(bot, slack, claude, channel_talk):
    fork_privately(bot, slack, claude)

    def answer_to(command, user):  # one at a time: answers to commands handled at once come in any order
        bot.slash(command, user=user)
        bot.settled()
        return slack.responses[-1]

    bobs, alices, context = answer_to("/forks", "UBOB0001"), answer_to("/forks", "UALICE01"), answer_to(
        "/context", "UBOB0001")
    assert "private" not in bobs["text"] and "pricing" not in bobs["text"] and "no open forks" in bobs["text"]
    assert "🔒" in alices["text"] and "pricing for schools" in alices["text"]
    assert "pricing" not in context["text"] and "No forks merged" in context["text"]
    bot.event({"type": "app_home_opened", "user": "UBOB0001", "channel": "D0BOB0001", "tab": "home",
               "event_ts": "1.1"})
    bot.event({"type": "app_home_opened", "user": "UALICE01", "channel": DM, "tab": "home", "event_ts": "1.2"})
    bot.settled()
    assert "pricing" not in str(slack.home("UBOB0001").view) and "🔒" in str(slack.home("UALICE01").view)
    bot.slash("/fork", "a public one", user="UBOB0001")
    bot.fork_root(number=1)
    assert bot.store.sessions.fork_by_number(GENERAL, 1).topic == "a public one"  # the channel's #1: no gap


def test_the_context_slack_attaches_to_the_message_is_enough(bot, slack, claude, channel_talk):
    ts = bot.dm("UALICE01", "quick private question", dm=DM, viewing=CHANNEL)
    wait_until(lambda: len(claude.requests) == channel_talk + 1)
    bot.settled()
    assert any(t.endswith("\nwe settled on Postgres for the launch") for t in request_texts(claude.requests[-1]))
    assert [m for m in posts_in(slack, DM, ts) if m.method == "chat.startStream"]


def test_a_person_who_is_not_a_member_gets_one_private_refusal_and_no_request_with_the_channels_turns(
        bot, slack, claude):
    slack.add_room(CHANNEL, "general", ["UBOB0001"])
    bot.say("UBOB0001", "members-only plans", mention=True)
    wait_until(lambda: slack.posts(CHANNEL, top_level=True))
    bot.settled()
    channels_own = len(claude.requests)
    bot.view_channel("UEVE0001", CHANNEL, dm="D0EVE0001")
    bot.dm("UEVE0001", "tell me their plans", dm="D0EVE0001")
    bot.settled()
    bot.dm("UEVE0001", "and again", dm="D0EVE0001")
    bot.settled()
    [refusal] = [c for c in slack.calls_to("chat.postEphemeral") if c["user"] == "UEVE0001"]
    assert refusal["channel"] == "D0EVE0001" and "not a member" in refusal["text"]
    asked = claude.requests[channels_own:]
    assert len(asked) == 2 and not any("members-only plans" in t for r in asked for t in request_texts(r))
    assert not [m for m in slack.posts("D0EVE0001") if m.get("thread_ts")]  # answered as a plain DM
    assert bot.store.private.private_forks_of(GENERAL, "UEVE0001") == []


def test_a_channel_the_bot_is_not_in_cannot_be_forked_privately(bot, slack, claude):
    slack.add_room("C0RANDOM01", "random", ["UALICE01"], bot=False)
    bot.view_channel("UALICE01", "C0RANDOM01", dm=DM)
    bot.dm("UALICE01", "hello", dm=DM)
    bot.settled()
    [refusal] = slack.calls_to("chat.postEphemeral")
    assert "I'm not in <#C0RANDOM01>" in refusal["text"] and "/invite @Threadfork" in refusal["text"]


def test_without_a_channel_in_view_the_dm_works_as_before(bot, slack, claude, channel_talk):
    bot.view_channel("UALICE01", CHANNEL, dm=DM)
    bot.view_channel("UALICE01", None, dm=DM)  # now viewing nothing Slack names
    bot.dm("UALICE01", "just chatting", dm=DM)
    wait_until(lambda: len(claude.requests) == channel_talk + 1)
    bot.settled()
    assert not any("Postgres" in t for t in request_texts(claude.requests[-1]))
    assert [m for m in slack.posts(DM) if not m.get("thread_ts")]  # a top-level DM answer
    assert slack.calls_to("conversations.members") == []


def test_a_view_slack_delivers_late_does_not_replace_the_one_after_it(bot, slack, claude, channel_talk):
    viewed_first, viewed_then = bot.new_ts(), bot.new_ts()
    bot.view_channel("UALICE01", None, dm=DM, event_ts=viewed_then)
    bot.view_channel("UALICE01", CHANNEL, dm=DM, event_ts=viewed_first)  # delivered after, happened before
    bot.dm("UALICE01", "just chatting", dm=DM)
    wait_until(lambda: len(claude.requests) == channel_talk + 1)
    bot.settled()
    assert not any("Postgres" in t for t in request_texts(claude.requests[-1]))
    assert bot.store.private.private_forks_of(GENERAL, "UALICE01") == []


def test_a_dm_whose_own_context_names_no_channel_is_a_dm_turn_whatever_was_viewed_before(bot, slack, claude,
                                                                                       channel_talk):
    bot.view_channel("UALICE01", CHANNEL, dm=DM)
    bot.dm("UALICE01", "just chatting", dm=DM, viewing="")  # Slack says, with the message: no channel in view
    wait_until(lambda: len(claude.requests) == channel_talk + 1)
    bot.settled()
    assert not any("Postgres" in t for t in request_texts(claude.requests[-1]))
    assert [m for m in slack.posts(DM) if not m.get("thread_ts")]  # a top-level DM answer


def test_membership_is_read_once_per_private_fork_not_per_turn(bot, slack, claude, channel_talk):
    root = fork_privately(bot, slack, claude)
    for n in range(3):
        bot.dm("UALICE01", f"more {n}", dm=DM, thread_ts=root)
        wait_until(lambda: len(claude.requests) == channel_talk + 2 + n)
        bot.settled()
    assert len(slack.calls_to("conversations.members")) == 1 and len(slack.calls_to("conversations.info")) == 1


def test_opening_the_dm_suggests_prompts_that_fit_the_channel_in_view(bot, slack, claude):
    slack.add_room(CHANNEL, "general", ["UALICE01"])
    bot.view_channel("UALICE01", CHANNEL, dm=DM)
    bot.settled()
    assert bot.open_dm("UALICE01", dm=DM).status == 200
    [made] = wait_until(lambda: slack.suggested(), message="the suggested prompts")
    assert made.channel == DM and 1 <= len(made.prompts) <= 4
    assert [p["title"] for p in made.prompts][:2] == ["Explore #general privately", "What has #general decided?"]
    [call] = slack.calls_to("assistant.threads.setSuggestedPrompts")
    assert "thread_ts" not in call.args
    bot.open_dm("UALICE01", dm=DM, tab="home")
    bot.settled()
    assert len(slack.calls_to("assistant.threads.setSuggestedPrompts")) == 1


def test_where_slack_was_told_no_members_whoever_wrote_in_the_channel_may_fork_it(bot, slack, claude):
    bot.say("UALICE01", "our roadmap: ship in May", mention=True)  # Alice and the bot wrote there: members
    wait_until(lambda: slack.posts(CHANNEL, top_level=True))
    bot.settled()
    fork_privately(bot, slack, claude, "is May realistic?")
    assert any(t.endswith("\nour roadmap: ship in May") for t in request_texts(claude.requests[-1]))
    bot.view_channel("UEVE0001", CHANNEL, dm="D0EVE0001")  # Eve never wrote there
    bot.dm("UEVE0001", "what's their roadmap?", dm="D0EVE0001")
    bot.settled()
    assert "not a member" in slack.calls_to("chat.postEphemeral")[-1]["text"]


def test_a_channel_at_its_spend_cap_cannot_be_forked_privately_either(bot, slack, claude, channel_talk):
    from .test_spend import costing, private, save_cap

    slack.person("UADMIN01", is_admin=True)
    save_cap(bot, slack, "UADMIN01", "0.1")  # #general's own cap; the DM has none
    claude.script(costing(0.11))
    bot.say("UBOB0001", "an expensive question", mention=True)
    wait_until(lambda: len(claude.requests) == channel_talk + 1)
    bot.settled()
    bot.view_channel("UALICE01", CHANNEL, dm=DM)
    bot.dm("UALICE01", "let me explore it privately", dm=DM)
    bot.settled()
    assert len(claude.requests) == channel_talk + 1  # no private fork's request, no DM answer either
    [refusal] = [t for t in private(slack) if "spend cap" in t]
    assert refusal.startswith(f"<#{CHANNEL}> reached its monthly spend cap") and "forks of it" in refusal
    assert not slack.posts(DM)  # no private fork's note, no answer


def told(slack, user):
    return [c.get("text", "") for c in slack.calls_to("chat.postEphemeral") if c["user"] == user] + \
        [r.get("text", "") for r in slack.responses]


def test_only_its_owner_may_act_on_a_private_fork_whatever_a_payload_says(bot, slack, claude, channel_talk):
    root = fork_privately(bot, slack, claude)
    intro = next(m for m in posts_in(slack, DM, root) if "Private fork of" in m.get("text", ""))
    fork_id = intro_fork_id(intro)
    requests = len(claude.requests)
    bot.click("fork_abandon", message_ts=intro.ts, channel=DM, user="UBOB0001")
    bot.shortcut("merge_this_fork", root, thread_ts=root, channel=DM, user="UBOB0001")
    bot.dm("UBOB0001", "let me in", dm=DM, thread_ts=root)
    bot.settled()
    assert len(claude.requests) == requests  # no turn, no draft
    assert bot.store.sessions.fork(fork_id).status.value == "open" and bot.store.sessions.fork(fork_id).draft is None
    assert not [t for t in bot.store.turns.turns(fork_id) if t.author_id == "UBOB0001"]
    assert sum("only they may" in text for text in told(slack, "UBOB0001")) >= 3
    claude.script(Script(text="Schools get 40% off."))
    bot.click("fork_merge", message_ts=intro.ts, channel=DM, user="UALICE01")
    draft = wait_until(lambda: [m for m in posts_in(slack, DM, root) if "Draft " in m.get("text", "")],
                       message="the draft in the DM thread")[0]
    bot.settled()
    bot.click("draft_merge", message_ts=draft.ts, channel=DM, user="UBOB0001")  # Merge as is, by someone else
    bot.settled()
    assert summaries(slack) == [] and bot.store.sessions.fork(fork_id).status.value == "open"


def test_suggested_prompts_never_name_a_channel_the_person_is_not_in(bot, slack, claude):
    slack.add_room(CHANNEL, "secret-plans", ["UBOB0001"])
    bot.view_channel("UALICE01", CHANNEL, dm=DM)
    bot.settled()
    assert bot.open_dm("UALICE01", dm=DM).status == 200
    [made] = wait_until(lambda: slack.suggested(), message="the suggested prompts")
    assert "secret-plans" not in str(made.prompts) and CHANNEL not in str(made.prompts)


def test_remembering_in_a_private_fork_writes_its_owners_own_memory_never_the_channels(
        bot, slack, claude, channel_talk):
    root = fork_privately(bot, slack, claude)
    bot.dm("UALICE01", "remember schools pay per classroom", dm=DM, thread_ts=root)
    [note] = wait_until(lambda: [m for m in posts_in(slack, DM, root) if "remembered" in m.get("text", "")],
                        message="the remembered note in the DM thread")
    assert "your own memory" in note["text"] and not [m for m in posts_in(slack, CHANNEL) if "remembered" in
                                                       m.get("text", "")]
    bot.settled()
    before = len(claude.requests)
    bot.say("UBOB0001", "what do schools pay?", mention=True)
    wait_until(lambda: len(claude.requests) == before + 1)
    bot.settled()
    assert "schools pay per classroom" not in str(claude.requests[-1]["system"])  # not the channel's memory
    before = len(claude.requests)
    bot.dm("UALICE01", "so what do schools pay?", dm=DM, thread_ts=root)
    wait_until(lambda: len(claude.requests) == before + 1)
    assert "schools pay per classroom" in str(claude.requests[-1]["messages"][-1])  # hers: a note in her fork


def test_remember_on_a_private_forks_draft_keeps_the_conclusion_its_owners_own_until_the_merge(
        bot, slack, claude, channel_talk):
    root = fork_privately(bot, slack, claude)
    intro = next(m for m in posts_in(slack, DM, root) if "Private fork of" in m.get("text", ""))
    claude.script(Script(text="Schools get 40% off.\n\n**Worth remembering**\n- Schools get 40% off."))
    bot.click("fork_merge", message_ts=intro.ts, channel=DM, user="UALICE01")
    draft = wait_until(lambda: [m for m in posts_in(slack, DM, root) if "Draft " in m.get("text", "")],
                       message="the draft in the DM thread")[0]
    bot.settled()
    [button] = [b["accessory"] for b in draft["blocks"] if b.get("accessory", {}).get("action_id")
                == "threadfork_memory_remember"]
    bot.click("threadfork_memory_remember", button["value"], message_ts=draft.ts, channel=DM, user="UALICE01")
    [note] = wait_until(lambda: [m for m in posts_in(slack, DM, root) if "remembered" in m.get("text", "")])
    assert "your own memory" in note["text"]
    assert not any("remembered" in m.get("text", "") for m in posts_in(slack, CHANNEL))
    assert "Schools get 40% off" not in str(claude.requests[-1]["system"])
    before = len(claude.requests)
    bot.say("UBOB0001", "what do schools get?", mention=True)
    wait_until(lambda: len(claude.requests) == before + 1)
    assert "Schools get 40% off" not in str(claude.requests[-1]["system"])  # not the channel's before the merge
