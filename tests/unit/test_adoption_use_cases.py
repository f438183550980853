"""Any thread adopted, on the in-memory store: a mention in a channel thread that is no fork makes it
an inherited fork whose first turn is the thread so far — once, whatever arrives twice."""
import threading

from bot.domain.model import Channel, ForkStatus, Mode, Role, TurnStatus
from bot.domain.transcript import INTRO, SPEAKER, YOURS
from bot.services.ports import ThreadMessage
from bot.services.incoming import SUMMONED, IncomingMessage

from .conftest import BOT, CHANNEL

GENERAL = Channel("T1", CHANNEL)


def post(cases, user, text, *, thread=None, mention=False, files=(), channel_type="channel"):
    """A person posts: Slack keeps the message (conversations.replies returns it), then delivers it."""
    ts = cases.new_ts()
    text = f"<@{BOT}> {text}" if mention else text
    cases.chat.threads.setdefault(thread or ts, []).append(ThreadMessage(ts, user, text, files=tuple(files)))
    cases.services.router.receive(IncomingMessage("T1", CHANNEL, channel_type, user, text, ts, thread))
    return ts


def names(cases):
    cases.chat.names.update(UALICE01="alice", UBOB0001="bob", UCAROL01="carol", UDAVE001="dave")


def test_a_mention_in_a_persons_thread_makes_it_an_inherited_fork_that_knows_the_thread(cases):
    names(cases)
    post(cases, "UALICE01", "we launch in June", mention=True)  # parent turns 1 and 2
    root = post(cases, "UBOB0001", "should we move the launch?")  # chatter: ignored
    post(cases, "UCAROL01", "I'd say yes", thread=root, files=["plan.pdf"])  # ignored too
    post(cases, "UALICE01", "said after the thread began", mention=True)  # parent turns 3 and 4
    mention = post(cases, "UDAVE001", "what do you think?", thread=root, mention=True)

    fork = cases.fork(1)
    assert (fork.adopted, fork.mode, fork.root_ts, fork.owner_id, fork.fork_point_seq) == (
        True, Mode.INHERIT, root, "UDAVE001", 2)
    assert fork.topic == "should we move the launch?" and fork.inherited.turns == 2
    assert [s.args[1:] for s in cases.chat.of("thread_messages")] == [(root,)]
    [note] = cases.chat.of("note_in_thread")
    assert "fork #1" in note.text and "✅" in note.text and "abandon" in note.text
    texts = cases.model.texts()
    assert texts[:2] == ["[alice <@UALICE01>]\nwe launch in June", "Answer 1"]
    assert "background from the channel" in texts[2]
    assert texts[3] == (f"[{SPEAKER}]\n{INTRO}\n\n[bob <@UBOB0001>]\nshould we move the launch?\n\n"
                        "[carol <@UCAROL01>]\nI'd say yes\n[shared 1 file, not read: plan.pdf]")
    assert texts[4:] == ["[dave <@UDAVE001>]\nwhat do you think?"]
    [*_, reply] = cases.chat.of("reply")
    assert reply.args[0].thread_ts == root and reply.args[0].reply_to_ts == mention
    assert cases.chat.said.index(note) < cases.chat.said.index(reply)  # the note comes before the answer

    post(cases, "UALICE01", "back to the launch", mention=True)
    assert not any("should we move" in t or "I'd say yes" in t for t in cases.model.texts())
    assert len(cases.chat.of("thread_messages")) == 1


def test_a_thread_under_a_bot_answer_is_adopted_alike_with_the_answer_quoted_as_the_bots(cases):
    names(cases)
    post(cases, "UALICE01", "draft a plan", mention=True)
    [answer] = cases.chat.of("reply")  # a top-level answer: no fork root
    cases.chat.threads[answer.ts] = [ThreadMessage(answer.ts, BOT, answer.text)]
    post(cases, "UBOB0001", "too long", thread=answer.ts)
    post(cases, "UBOB0001", "shorten it", thread=answer.ts, mention=True)

    fork = cases.fork(1)
    assert fork.adopted and fork.root_ts == answer.ts
    assert fork.fork_point_seq == 1  # the question; its answer is the thread's root, quoted below
    opening = cases.store.turns.turns(fork.id)[0]
    assert (opening.seq, opening.role, opening.status) == (1, Role.USER, TurnStatus.ANSWERED)
    assert f"{YOURS}\nAnswer 1\n\n[bob <@UBOB0001>]\ntoo long" in opening.text
    roles = [m["role"] for m in cases.model.inputs[-1].messages()]
    assert roles[0] == "user" and all(a != b for a, b in zip(roles, roles[1:]))  # the API's alternation


def test_the_mention_delivered_twice_and_a_second_persons_at_once_make_one_adoption(cases):
    names(cases)
    root = post(cases, "UBOB0001", "should we move the launch?")
    cases.chat.read_delay = 0.3  # whoever adopts reads slowly: the others arrive meanwhile
    first_ts, second_ts = cases.new_ts(), cases.new_ts()
    first = IncomingMessage("T1", CHANNEL, "channel", "UCAROL01", f"<@{BOT}> yes or no?", first_ts, root)
    second = IncomingMessage("T1", CHANNEL, "channel", "UDAVE001", f"<@{BOT}> and why?", second_ts, root)
    runs = [threading.Thread(target=cases.services.router.receive, args=(m,)) for m in (first, first, second)]
    for run in runs:
        run.start()
    for run in runs:
        run.join()

    assert [f.number for f in cases.store.sessions.forks_in(GENERAL, ForkStatus.OPEN)] == [1]
    assert len(cases.chat.of("thread_messages")) == 1 and len(cases.chat.of("note_in_thread")) == 1
    fork = cases.fork(1)
    turns = [(t.author_name, t.status) for t in cases.store.turns.turns(fork.id) if t.role is Role.USER]
    assert turns[0] == (SPEAKER, TurnStatus.ANSWERED)
    assert sorted(turns[1:]) == [("carol", TurnStatus.ANSWERED), ("dave", TurnStatus.ANSWERED)]
    for request in cases.model.inputs:  # every answer in the thread saw the thread first
        texts = [b.text for b in request.blocks]
        assert texts[0].startswith(f"[{SPEAKER}]") and "should we move the launch?" in texts[0]


def test_a_reply_without_a_mention_in_a_thread_that_is_no_fork_is_ignored_and_reads_nothing(cases):
    root = post(cases, "UBOB0001", "lunch?")
    reply = post(cases, "UCAROL01", "sure", thread=root)
    assert cases.chat.said == [] and cases.model.inputs == []
    assert cases.store.sessions.fork_by_message(GENERAL, root) is None
    assert cases.store.claims.claim(f"msg:T1:{CHANNEL}:{reply}")  # nothing was claimed


def test_ordinary_turns_read_no_thread_after_the_one_adoption(cases):
    root = post(cases, "UBOB0001", "an idea")
    post(cases, "UCAROL01", "tell me more", thread=root, mention=True)
    post(cases, "UCAROL01", "and the costs?", thread=root)  # a fork turn now, no mention needed
    post(cases, "UALICE01", "something else", mention=True)
    assert len(cases.chat.of("thread_messages")) == 1 and len(cases.model.inputs) == 3
    assert cases.model.texts(1)[-1].endswith("and the costs?")


def test_a_threaded_direct_message_is_still_a_parent_turn(cases):
    root = post(cases, "UALICE01", "hi", channel_type="im")
    post(cases, "UALICE01", "more", thread=root, channel_type="im")
    assert cases.chat.of("thread_messages") == [] and cases.fork(1) is None and len(cases.model.inputs) == 2


def test_when_slack_will_not_give_the_thread_the_fork_starts_from_the_channel_and_says_so(cases):
    cases.chat.refuse.add("thread_messages")
    root = post(cases, "UBOB0001", "an idea")
    post(cases, "UCAROL01", "thoughts?", thread=root, mention=True)
    fork = cases.fork(1)
    assert fork.adopted and [t.seq for t in cases.store.turns.turns(fork.id)] == [2, 3]
    [note] = cases.chat.of("note_in_thread")
    assert "fork #1" in note.text and "couldn't read the messages above" in note.text
    assert cases.model.texts()[-1].endswith("thoughts?")


def test_an_empty_mention_adopts_the_thread_and_asks_about_it(cases):
    root = post(cases, "UBOB0001", "an idea")
    post(cases, "UCAROL01", "", thread=root, mention=True)
    assert cases.fork(1).adopted and cases.model.texts()[-1].endswith(f"\n{SUMMONED}")


def test_an_adopted_thread_merges_into_the_channel_with_a_check_mark_on_any_of_its_earlier_messages(cases):
    root = post(cases, "UBOB0001", "an idea")
    earlier = post(cases, "UCAROL01", "a detail", thread=root)
    post(cases, "UCAROL01", "thoughts?", thread=root, mention=True)
    cases.react("UALICE01", earlier)
    fork = cases.fork(1)
    assert fork.status is ForkStatus.MERGED
    [merge] = cases.chat.of("post_merge")
    assert merge.args[0].id == fork.id
    [summary] = [t for t in cases.store.turns.turns(cases.parent()) if t.role is Role.SUMMARY]
    post(cases, "UALICE01", "next", mention=True)
    assert summary.text in cases.model.texts()  # the channel's parent now knows the summary


def test_asking_for_a_fork_in_a_thread_that_is_none_adopts_that_thread(cases):
    root = post(cases, "UBOB0001", "an idea")
    post(cases, "UCAROL01", "fork --inherit what would it cost?", thread=root, mention=True)
    fork = cases.fork(1)
    assert fork.adopted and fork.root_ts == root and cases.fork(2) is None
    assert cases.model.texts()[-1] == "[ucarol01 <@UCAROL01>]\nwhat would it cost?"


def test_a_thread_read_slowly_is_told_once_that_the_bot_is_still_reading_before_the_adoption_note(cases):
    names(cases)
    root = post(cases, "UBOB0001", "should we move the launch?")
    cases.services.adoption.still_reading_after = 0.1  # Slack pages slowly (rate-limited): the thread is told
    cases.chat.read_delay = 0.4
    post(cases, "UCAROL01", "what do you think?", thread=root, mention=True)
    notes = [s.args[1] for s in cases.chat.of("note_in_thread")]
    assert len(notes) == 2 and notes[0].startswith("📖 I'm still reading") and notes[1].startswith("🧵 This thread")
    cases.chat.read_delay = 0.0
    second = post(cases, "UBOB0001", "quick one", thread=post(cases, "UBOB0001", "another thread"), mention=True)
    assert second and [s.args[1][:2] for s in cases.chat.of("note_in_thread")][2:] == ["🧵 "]  # read at once: no note
