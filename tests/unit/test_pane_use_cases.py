"""The agent pane's use cases on the in-memory store (Slack and Claude recorded at their ports): a DM written
beside a channel becomes a private fork of it, the membership is read once per private fork, and a person
who may not fork the channel is told once and answered as in any DM."""
from bot.domain.model import Channel, Role, TurnStatus

from .conftest import CHANNEL

DM = "D0ALICE01"


def test_a_dm_beside_a_channel_forks_it_privately_and_reads_its_membership_once(cases):
    cases.chat.rooms[CHANNEL] = ("general", {"UALICE01", "bot"})
    cases.say("UBOB0001", "the channel's plan", mention=True)
    cases.services.pane.viewed("T1", "UALICE01", [CHANNEL], "1700000000.000100")
    root = cases.say("UALICE01", "private question", channel=DM, channel_type="im")
    fork = cases.store.sessions.fork_by_message(Channel("T1", DM), root)
    assert (fork.private_of, fork.owner_id, fork.topic) == (CHANNEL, "UALICE01", "private question")
    assert any(t.endswith("the channel's plan") for t in cases.model.texts())
    for n in range(2):
        cases.say("UALICE01", f"more {n}", channel=DM, channel_type="im", thread_ts=root)
    assert len(cases.chat.of("membership")) == 1 and len(cases.model.inputs) == 4
    assert [s.what for s in cases.chat.said if s.what.startswith("session")][:2] == ["session_opened",
                                                                                       "session_status"]
    assert not any(t.text.startswith("more") for t in cases.store.turns.turns(cases.parent()))


def test_someone_who_may_not_fork_the_channel_is_told_once_and_answered_as_in_any_dm(cases):
    cases.chat.rooms[CHANNEL] = ("general", {"UBOB0001", "bot"})
    cases.services.pane.viewed("T1", "UEVE0001", [CHANNEL], "1700000000.000100")
    for text in ("first", "second"):
        cases.say("UEVE0001", text, channel="D0EVE0001", channel_type="im")
    assert len([t for t in cases.chat.told("UEVE0001") if "not a member" in t]) == 1
    dm = cases.store.sessions.parent_id(Channel("T1", "D0EVE0001"))
    assert [t.text for t in cases.store.turns.turns(dm) if t.role is Role.USER] == ["first", "second"]
    assert all(t.status is TurnStatus.ANSWERED for t in cases.store.turns.turns(dm) if t.role is Role.USER)
    assert cases.store.private.private_forks_of(Channel("T1", CHANNEL), "UEVE0001") == []
