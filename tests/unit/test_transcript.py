"""An adopted thread's earlier messages as one user turn: speakers, the bot's own posts, files named
and not read, long threads cut to their first and latest messages."""
from bot.domain.context import parent_input
from bot.domain.model import Role, Turn, TurnStatus
from bot.domain.transcript import INTRO, SPEAKER, YOURS, Quoted, before, topic, transcript


def test_each_message_names_its_speaker_and_the_bots_own_posts_are_marked_as_yours():
    text = transcript([Quoted("should we move the launch?", "UBOB0001", "bob"),
                       Quoted("Here is a plan.", yours=True),
                       Quoted("deploy done", None, "ci-bot"),
                       Quoted("who said that?", "UCAROL01", None)])
    assert text.split("\n\n") == [INTRO, "[bob <@UBOB0001>]\nshould we move the launch?", f"{YOURS}\nHere is a plan.",
                                  "[ci-bot]\ndeploy done", "[<@UCAROL01>]\nwho said that?"]


def test_files_are_named_not_read_and_messages_with_nothing_in_them_are_left_out():
    text = transcript([Quoted("see attached", "U1", "ann", files=("plan.pdf", "chart.png")),
                       Quoted("", "U2", "bo", files=("notes.txt",)), Quoted("   ", "U3", "cy")])
    assert "[ann <@U1>]\nsee attached\n[shared 2 files, not read: plan.pdf, chart.png]" in text
    assert "[bo <@U2>]\n[shared 1 file, not read: notes.txt]" in text
    assert "cy" not in text and "not seen their contents" in INTRO
    assert transcript([Quoted(" ", "U3", "cy")]) is None and transcript([]) is None


def test_a_long_thread_keeps_its_first_message_and_its_latest_ones():
    messages = [Quoted(f"message {n} " + "x" * 90, "U1", "ann") for n in range(100)]
    text = transcript(messages, limit=len(INTRO) + 2_000)
    assert len(text) <= len(INTRO) + 2_000
    kept = [int(part.split()[3]) for part in text.split("\n\n")[1:] if part.startswith("[ann")]
    assert kept[0] == 0 and kept[-1] == 99 and kept[1:] == list(range(100 - len(kept) + 1, 100))
    assert f"[… {100 - len(kept)} earlier messages of the thread left out …]" in text


def test_the_transcript_turn_renders_under_its_own_speaker_line_as_a_users_block():
    turn = Turn(9, 1, Role.USER, transcript([Quoted("hi", "U1", "ann")]), None, SPEAKER, TurnStatus.ANSWERED)
    [block] = parent_input([turn]).blocks
    assert block.role == "user" and block.text.startswith(f"[{SPEAKER}]\n{INTRO}")


def test_the_topic_is_the_first_line_of_the_threads_first_message_shortened():
    assert topic("\n  should we move the launch?\nmore detail") == "should we move the launch?"
    long = topic("y" * 500)
    assert len(long) == 150 and long.endswith("…")
    assert topic("") == ""


def test_before_compares_slack_ts_as_numbers():
    assert before("1700000009.000100", "1700000010.000001") and not before("1700000010.000001", "1700000010.000001")
    assert before("999.9", "1000.0")  # not as strings
