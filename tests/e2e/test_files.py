"""Files people share, end to end: Slack's file objects in message events, downloads with the bot's
token from the fake Slack, uploads to the fake Files API, and the image / document / text blocks
Claude receives — byte-identical from turn to turn."""
import json

from ..fakes.anthropic_api import request_texts
from ..fakes.samples import pdf, png
from ..harness import BOT_TOKEN, CHANNEL, wait_until


def content_blocks(request: dict) -> list[dict]:
    return [block for message in request["messages"] for block in message["content"]]


def kinds(request: dict) -> list[str]:
    return [block["type"] for block in content_blocks(request)]


def test_an_image_with_no_words_is_a_turn_read_as_an_image_downloaded_and_uploaded_once(bot, slack, claude):
    image = slack.share_file("screenshot.png", png(40, 30), "image/png", "png")
    bot.say("UALICE01", "", mention=True, files=[image])  # arrives as message and app_mention, both with files
    wait_until(lambda: slack.posts(CHANNEL))
    bot.settled()
    [request] = claude.requests
    [upload] = claude.files.uploads
    assert kinds(request) == ["image", "text"]
    assert content_blocks(request)[0]["source"] == {"type": "file", "file_id": upload.file_id}
    assert (upload.filename, upload.mime_type) == ("screenshot.png", "image/png")
    [download] = slack.downloads_of(image["id"])
    assert download.token == BOT_TOKEN and download.served
    bot.say("UALICE01", "and what colour is it?", mention=True)
    wait_until(lambda: len(claude.requests) == 2)
    assert len(slack.downloads_of(image["id"])) == 1 and len(claude.files.uploads) == 1  # never again
    assert content_blocks(claude.requests[1])[0] == {"type": "image", "source": {"type": "file",
                                                                                  "file_id": upload.file_id}}


def test_a_pdf_with_a_question_is_a_document_before_the_words(bot, slack, claude):
    report = slack.share_file("q3-report.pdf", pdf(4), "application/pdf", "pdf")
    bot.say("UALICE01", "what were the q3 numbers?", mention=True, files=[report])
    wait_until(lambda: claude.requests)
    blocks = content_blocks(claude.requests[0])
    assert blocks[0]["type"] == "document" and blocks[0]["title"] == "q3-report.pdf"
    assert blocks[0]["source"]["file_id"] == claude.files.uploads[0].file_id
    assert blocks[1]["text"].endswith("what were the q3 numbers?")


def test_a_text_file_in_a_fork_is_read_as_text_and_never_reaches_the_parent(bot, slack, claude):
    bot.slash("/fork", "--inherit the outage")
    root = bot.fork_root()
    bot.settled()
    log = slack.share_file("server.log", b"12:01 ERROR disk full on db-2\n", "text/plain", "text")
    bot.say("UBOB0001", "here is the log", thread_ts=root, files=[log])
    wait_until(lambda: len(claude.requests) == 2)
    texts = request_texts(claude.requests[1])
    assert "[File “server.log” (text/plain):]\n12:01 ERROR disk full on db-2\n" in texts
    assert claude.files.uploads == []  # text is read, not uploaded
    bot.react("UCAROL01", root)
    wait_until(lambda: any("merged fork" in p.get("text", "") for p in slack.posts(CHANNEL, top_level=True)))
    bot.settled()
    bot.say("UALICE01", "so what broke?", mention=True)
    wait_until(lambda: request_texts(claude.requests[-1])[-1].endswith("so what broke?"))
    parent_request = json.dumps(claude.requests[-1])  # the fake's summary quotes "here is the log", not the file
    assert "disk full on db-2" not in parent_request and "[File " not in parent_request


def test_files_claude_cannot_take_get_one_private_notice_and_the_rest_is_answered(bot, slack, claude):
    movie = slack.share_file("demo.mp4", b"\x00\x00\x00\x18ftypmp42", "video/mp4", "mp4")
    huge = slack.share_file("huge.png", png(), "image/png", "png")
    huge["size"] = 60 * 1024 * 1024  # as Slack reports it: the bot does not even download it
    locked = slack.share_file("locked.pdf", pdf(), "application/pdf", "pdf", refuse="login")
    fine = slack.share_file("fine.png", png(), "image/png", "png")
    bot.say("UALICE01", "look at these", mention=True, files=[movie, huge, locked, fine])
    wait_until(lambda: claude.requests)
    bot.settled()
    [notice] = slack.calls_to("chat.postEphemeral")
    assert notice["user"] == "UALICE01"
    for name in ("demo.mp4", "huge.png", "locked.pdf"):
        assert name in notice["text"]
    assert "fine.png" not in notice["text"] and "answer the rest" in notice["text"]
    assert kinds(claude.requests[0]) == ["image", "text"] and len(claude.files.uploads) == 1
    assert slack.downloads_of(huge["id"]) == [] and slack.downloads_of(locked["id"], served=True) == []


def test_a_deleted_file_is_never_sent_again_and_the_turns_words_stay(bot, slack, claude):
    secret = slack.share_file("secret.png", png(), "image/png", "png")
    message = bot.said("UALICE01", "what is on this slide?", mention=True, files=[secret])
    wait_until(lambda: claude.requests)
    bot.settled()
    deletion = slack.delete_file(secret["id"], message)
    assert bot.event(deletion.file_deleted).status == 200
    assert bot.event(deletion.message_changed).status == 200  # its message now shows a tombstone
    bot.settled()
    bot.say("UALICE01", "and now?", mention=True)
    wait_until(lambda: len(claude.requests) == 2)
    assert "image" not in kinds(claude.requests[1])
    assert any(t.endswith("what is on this slide?") for t in request_texts(claude.requests[1]))


def test_a_session_with_files_sends_the_same_bytes_for_its_history_every_turn(bot, slack, claude):
    for n, data in enumerate((png(10, 10), pdf(2))):
        kind = ("image/png", "png") if n == 0 else ("application/pdf", "pdf")
        bot.say("UALICE01", f"file {n}", mention=True, files=[slack.share_file(f"f{n}", data, *kind)])
        wait_until(lambda: len(claude.requests) == n + 1)
        bot.settled()
    bot.say("UALICE01", "last question", mention=True)
    wait_until(lambda: len(claude.requests) == 3)
    bot.slash("/fork", "--inherit a side question")
    wait_until(lambda: len(claude.requests) == 4)
    earlier, later, fork = claude.requests[1], claude.requests[2], claude.requests[3]

    def plain(messages):  # breakpoints move to the newest block; everything else must be identical
        return json.dumps([{**m, "content": [{k: v for k, v in b.items() if k != "cache_control"}
                                             for b in m["content"]]} for m in messages])

    assert plain(later["messages"][:len(earlier["messages"]) - 1]) == plain(earlier["messages"][:-1])
    assert plain(fork["messages"][:len(later["messages"]) - 1]) == plain(later["messages"][:-1])
    assert kinds(fork).count("image") == 1 and kinds(fork).count("document") == 1
