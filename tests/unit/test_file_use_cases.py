"""Files people share, web research and feedback, on the in-memory store with Chat and Model faked
at the port: each rule of issue 12 in milliseconds (the end-to-end tests prove the wire formats)."""
import itertools

from bot.domain.model import Channel, Usage
from bot.services.ports import SharedFile, Source
from bot.services.incoming import IncomingMessage

from ..fakes.ports import Answer
from ..fakes.samples import pdf, png
from .conftest import BOT, CHANNEL, UseCases

_ids = itertools.count(1)


def share(cases: UseCases, name: str, data: bytes, mimetype: str, filetype: str = "", size: int | None = None):
    file = SharedFile(f"F{next(_ids):06d}", name, mimetype, filetype, len(data) if size is None else size,
                      f"https://files.slack.com/files-pri/T1-F/{name}")
    cases.chat.files[file.id] = data
    return file


def say_with_files(cases: UseCases, text: str, *files, thread_ts=None, user="UALICE01") -> str:
    ts = cases.new_ts()
    words = f"<@{BOT}> {text}" if thread_ts is None else text
    cases.services.router.receive(IncomingMessage("T1", CHANNEL, "channel", user, words, ts, thread_ts, files))
    return ts


def test_an_image_with_no_words_is_a_turn_and_reaches_claude_as_an_image_block_before_the_words(cases):
    image = share(cases, "screenshot.png", png(), "image/png", "png")
    say_with_files(cases, "", image)
    [request] = cases.model.inputs
    kinds = [(b.kind, b.file_id is not None) for b in request.blocks]
    assert kinds == [("image", True), ("text", False)]
    assert request.blocks[-1].text.endswith("[shared the files above, without a message]")
    assert cases.model.uploads[0][:2] == ("screenshot.png", "image/png")


def test_a_pdf_and_a_text_file_go_as_a_document_and_as_text(cases):
    report = share(cases, "report.pdf", pdf(3), "application/pdf", "pdf")
    log = share(cases, "server.log", b"ERROR disk full\n", "text/plain", "text")
    say_with_files(cases, "what happened?", report, log)
    blocks = cases.model.inputs[0].blocks
    assert [b.kind for b in blocks] == ["document", "text", "text"]
    assert blocks[0].text == "report.pdf"
    assert blocks[1].text == "[File “server.log” (text/plain):]\nERROR disk full\n"
    assert blocks[2].text.endswith("what happened?")
    assert [u[0] for u in cases.model.uploads] == ["report.pdf"]  # text is not uploaded


def test_a_file_is_downloaded_and_uploaded_once_however_often_it_is_shared_or_asked_about(cases):
    image = share(cases, "diagram.png", png(), "image/png", "png")
    say_with_files(cases, "look", image)
    say_with_files(cases, "and again", image)  # shared again in a later message
    same_bytes = share(cases, "copy.png", png(), "image/png", "png")  # the same content, another Slack file
    say_with_files(cases, "and a copy", same_bytes)
    cases.say("UALICE01", "anything else?", mention=True)
    assert len(cases.chat.of("download")) == 2 and len(cases.model.uploads) == 1
    file_ids = {b.file_id for b in cases.model.inputs[-1].blocks if b.file_id}
    assert len(file_ids) == 1 and sum(1 for b in cases.model.inputs[-1].blocks if b.kind == "image") == 3


def test_files_claude_cannot_take_are_named_in_one_private_notice_and_the_rest_is_answered(cases):
    cases.services.attachments.max_file_bytes = 1_000_000
    files = [share(cases, "movie.mp4", b"\0" * 10, "video/mp4", "mp4"),
             share(cases, "huge.png", png(), "image/png", "png", size=6_000_000),
             share(cases, "wide.png", png(9000, 2), "image/png", "png"),
             share(cases, "long.pdf", pdf(101), "application/pdf", "pdf"),
             share(cases, "login.png", b"<!DOCTYPE html><html>log in</html>", "image/png", "png"),
             share(cases, "fine.png", png(), "image/png", "png")]
    cases.chat.files.pop(files[-1].id)  # Slack refuses this one
    ok = share(cases, "ok.png", png(3, 3), "image/png", "png")
    say_with_files(cases, "please look", *files, ok)
    [notice] = cases.chat.told("UALICE01")
    for name, reason in (("movie.mp4", "can't read this kind of file"), ("huge.png", "larger than the 1.0 MB"),
                         ("wide.png", "9000×2 pixels"), ("long.pdf", "101 pages"),
                         ("login.png", "did not send the file itself"), ("fine.png", "would not let me download")):
        assert name in notice and reason in notice, (name, notice)
    assert [b.kind for b in cases.model.inputs[0].blocks] == ["image", "text"]  # ok.png and the words


def test_a_message_whose_only_files_cannot_be_taken_is_told_why_and_not_answered(cases):
    say_with_files(cases, "", share(cases, "movie.mp4", b"\0" * 10, "video/mp4", "mp4"))
    assert cases.model.inputs == [] and "movie.mp4" in cases.chat.told("UALICE01")[0]


def test_a_deleted_file_is_sent_no_more_but_the_turns_words_stay(cases):
    image = share(cases, "secret.png", png(), "image/png", "png")
    say_with_files(cases, "what is this?", image)
    cases.services.gestures.file_deleted(image.id)
    cases.say("UALICE01", "and now?", mention=True)
    texts = [b.text for b in cases.model.inputs[-1].blocks]
    assert not any(b.kind == "image" for b in cases.model.inputs[-1].blocks)
    assert any(t.endswith("what is this?") for t in texts)


def test_a_fork_inherits_the_parents_files_and_its_own_files_never_reach_the_parent(cases):
    say_with_files(cases, "our architecture", share(cases, "arch.png", png(), "image/png", "png"))
    fork = cases.open_fork("side topic")
    say_with_files(cases, "a fork-only file", share(cases, "fork.pdf", pdf(), "application/pdf", "pdf"),
                   thread_ts=fork.root_ts)
    fork_request = cases.model.inputs[-1]
    assert [b.kind for b in fork_request.blocks if b.kind != "text"] == ["image", "document"]
    cases.react("UALICE01", fork.root_ts)
    cases.say("UALICE01", "back in the channel", mention=True)
    parent_request = cases.model.inputs[-1]
    assert [b.kind for b in parent_request.blocks if b.kind != "text"] == ["image"]


def test_an_answer_that_used_research_ends_with_its_sources_and_later_requests_carry_only_those(cases):
    cases.model.answer(Answer("Postgres 18 is out.", Usage(100, 20, searches=2, fetches=1),
                              sources=(Source("https://example.org/pg18", "PostgreSQL 18 released"),
                                       Source("https://example.org/notes", "https://example.org/notes"))))
    cases.say("UALICE01", "what's new in postgres?", mention=True)
    [reply] = cases.chat.of("reply")
    expected = ("Postgres 18 is out.\n\n**Sources**\n1. [PostgreSQL 18 released](https://example.org/pg18)\n"
                "2. https://example.org/notes")
    assert reply.text == expected
    assert cases.turns(cases.parent())[-1] == ("assistant", "complete", expected)
    economy = cases.store.views.channel_economy(Channel("T1", CHANNEL))
    assert (economy.searches, economy.fetches) == (2, 1)


def test_feedback_pressed_twice_by_one_person_counts_once_and_shows_in_context(cases):
    cases.say("UALICE01", "hello", mention=True)
    answer_ts = cases.chat.of("reply")[0].ts
    for user, value in (("UALICE01", "good"), ("UALICE01", "bad"), ("UBOB0001", "bad"), ("UCAROL01", "meh")):
        cases.services.gestures.feedback(Channel("T1", CHANNEL), answer_ts, user, value)
    economy = cases.store.views.channel_economy(Channel("T1", CHANNEL))
    assert (economy.good, economy.bad) == (1, 1)
    cases.slash("/context")
    report = cases.chat.of("show_context")[0].args[1]
    assert (report.economy.good, report.economy.bad) == (1, 1)
