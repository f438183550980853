"""Where a person's message goes, on the in-memory store: each rule in milliseconds."""
from bot.domain.model import Channel, ForkStatus
from bot.domain.settings import ChannelSettings
from bot.services.incoming import IncomingMessage

from .conftest import CHANNEL, UseCases


def test_a_mention_is_a_parent_turn_answered_at_the_top_level_with_its_speaker(cases):
    cases.chat.names["UALICE01"] = "alice"
    cases.say("UALICE01", "what is our plan?", mention=True)
    [reply] = cases.chat.of("reply")
    assert reply.args[0].thread_ts is None and reply.text == "Answer 1"
    assert cases.model.texts(0) == ["[alice <@UALICE01>]\nwhat is our plan?"]
    assert cases.turns(cases.parent()) == [("user", "answered", "what is our plan?"),
                                           ("assistant", "complete", "Answer 1")]


def test_the_same_message_delivered_twice_is_answered_once(cases):
    ts = cases.new_ts()
    message = IncomingMessage("T1", CHANNEL, "channel", "UALICE01", "<@UBOT0001> hi", ts)
    cases.services.router.receive(message)
    cases.services.router.receive(message)
    assert len(cases.model.inputs) == 1 and len(cases.chat.of("reply")) == 1


def test_channel_chatter_without_a_mention_is_ignored_and_costs_no_write(cases):
    cases.say("UALICE01", "lunch anyone?")
    assert cases.model.inputs == [] and cases.chat.said == []
    assert cases.store.claims.claim(f"msg:T1:{CHANNEL}:1700000001.000001")  # nothing was claimed


def test_every_direct_message_is_a_parent_turn(cases):
    cases.say("UALICE01", "hello there", channel="D0ALICE", channel_type="im")
    assert cases.model.texts(0)[-1].endswith("hello there")


def test_an_empty_mention_and_a_merge_in_a_thread_that_is_no_fork_get_one_private_answer(cases):
    cases.say("UALICE01", "", mention=True)
    cases.say("UBOB0001", "merge please", mention=True, thread_ts="1699999999.000001")
    assert cases.model.inputs == [] and cases.store.sessions.fork_by_number(Channel("T1", CHANNEL), 1) is None
    empty, foreign = cases.chat.told()
    assert "empty message" in empty and "isn't a fork, so there is nothing to merge" in foreign


def test_in_a_forks_thread_every_message_is_a_turn_without_a_mention(cases):
    fork = cases.open_fork("--fresh")
    cases.say("UBOB0001", "an idea", thread_ts=fork.root_ts)
    [reply] = cases.chat.of("reply")
    assert reply.args[0].thread_ts == fork.root_ts and reply.args[0].recipient_id == "UBOB0001"
    assert cases.turns(fork.id)[0] == ("user", "answered", "an idea")


def test_a_message_in_a_closed_fork_gets_a_notice_and_no_model_call(cases):
    fork = cases.open_fork("--fresh")
    cases.react("UALICE01", fork.root_ts, "x")
    cases.say("UBOB0001", "anyone?", thread_ts=fork.root_ts)
    assert cases.model.inputs == [] and "abandoned, so I won't answer here" in cases.chat.told("UBOB0001")[0]


def test_merge_and_abandon_mentioned_in_a_thread_act_on_its_fork(cases):
    first, second = cases.open_fork("one"), cases.open_fork("two")
    cases.say("UBOB0001", "merge: keep it short", mention=True, thread_ts=first.root_ts)
    cases.say("UBOB0001", "abandon", mention=True, thread_ts=second.root_ts)
    assert cases.fork(1).status is ForkStatus.MERGED and cases.fork(2).status is ForkStatus.ABANDONED
    assert "Their guidance for the summary: keep it short" in cases.model.texts()[-1]


def test_a_fork_over_its_budget_keeps_new_messages_unanswered_until_continue():
    cases = UseCases(fork_token_budget=100)
    fork = cases.open_fork("expensive topic")  # the topic's answer burns the budget (120 tokens)
    [notice] = cases.chat.of("budget_reached")
    assert notice.args[1:] == (120, 100)  # burned, budget
    cases.say("UBOB0001", "one more thing", thread_ts=fork.root_ts)
    assert len(cases.model.inputs) == 1 and "used up its token budget" in cases.chat.told("UBOB0001")[0]
    assert cases.turns(fork.id)[-1] == ("user", "failed", "one more thing")
    cases.services.budgets.raise_limit(fork.id, "UALICE01", Channel("T1", CHANNEL))
    cases.react("UBOB0001", cases.store.turns.turns(fork.id)[-1].slack_ts, "repeat")
    assert len(cases.model.inputs) == 2 and cases.turns(fork.id)[-2][:2] == ("user", "answered")


def test_under_the_owner_policy_only_the_owner_raises_a_forks_budget():
    cases = UseCases(fork_token_budget=100, merge_policy="owner")
    fork = cases.open_fork("expensive topic")
    cases.services.budgets.raise_limit(fork.id, "UBOB0001", Channel("T1", CHANNEL))
    assert "Only <@UALICE01>" in cases.chat.told("UBOB0001")[0]
    assert cases.store.budgets.budget_extra(fork.id) == 0
    cases.services.budgets.raise_limit(fork.id, "UALICE01", Channel("T1", CHANNEL))
    assert cases.store.budgets.budget_extra(fork.id) == 100


def test_a_turn_goes_by_what_its_deliverys_keep_read_of_the_channel_and_reads_it_no_more(cases):
    here = Channel("T1", CHANNEL)
    kept = cases.store.inbox.keep_and_read("event:Ev1", "{}", 30, here)
    cases.store.channel_settings.save(here, ChannelSettings(model="claude-haiku-5-5"), "UADMIN01")  # after the keep
    ts = cases.new_ts()
    cases.services.router.receive(IncomingMessage("T1", CHANNEL, "channel", "UALICE01", "<@UBOT0001> hi", ts,
                                                  standing=kept))
    assert cases.model.inputs[0].model != "claude-haiku-5-5"  # the settings as the delivery's keep read them
    assert cases.turns(cases.parent()) == [("user", "answered", "hi"), ("assistant", "complete", "Answer 1")]
    cases.say("UALICE01", "and now?", mention=True)  # no keep read for it (a replay): read at its turn
    assert cases.model.inputs[1].model == "claude-haiku-5-5"
