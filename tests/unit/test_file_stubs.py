"""Slack Connect file stubs resolved by the Slack adapter (bot/slack/listeners.py) against the fake
Slack: one files.info per file however often it is read, and none for a message nobody reads."""
from bot.slack.clients import OneWorkspace, web_client
from bot.slack.clients import connection_pool
from bot.infrastructure.tls import tls_context
from bot.slack.listeners import FileStubs, MessageFiles

from ..fakes.samples import png
from ..fakes.slack_api import BOT_TOKEN, BOT_USER_ID, TEAM_ID as TEAM


def stubs_for(slack) -> FileStubs:
    return FileStubs(OneWorkspace(web_client(BOT_TOKEN, slack.api_url, connection_pool(tls_context())), BOT_USER_ID))


def test_a_stub_is_resolved_once_to_a_downloadable_file_however_often_it_arrives(slack):
    stub = slack.share_file("diagram.png", png(), "image/png", "png", connect="visible")
    stubs = stubs_for(slack)
    first = MessageFiles([stub], TEAM, stubs)[0]
    second = MessageFiles([stub], TEAM, stubs)[0]  # the same mention as app_mention
    assert first == second and first.name == "diagram.png" and first.mimetype == "image/png"
    assert first.url and first.url.endswith("/download/diagram.png")
    assert len(slack.calls_to("files.info")) == 1


def test_a_file_slack_keeps_from_the_bot_stays_without_a_url_and_is_not_asked_again_at_once(slack):
    stub = slack.share_file("secret.pdf", b"%PDF-1.4", "application/pdf", "pdf", connect="hidden")
    stubs = stubs_for(slack)
    [file] = MessageFiles([stub], TEAM, stubs)
    [again] = MessageFiles([stub], TEAM, stubs)
    assert file.url is None and again.url is None and file.name == stub["id"]
    assert len(slack.calls_to("files.info")) == 1


def test_files_nobody_reads_cost_no_call_and_whole_files_are_never_looked_up(slack):
    stub = slack.share_file("later.png", png(), "image/png", "png", connect="visible")
    whole = slack.share_file("whole.png", png(), "image/png", "png")
    gone = {"id": "F0GONE", "mode": "tombstone"}
    unread = MessageFiles([stub, gone], TEAM, stubs_for(slack))
    assert len(unread) == 1 and bool(unread)
    [read] = MessageFiles([whole], TEAM, stubs_for(slack))
    assert read.url == whole["url_private_download"]
    assert slack.calls_to("files.info") == []
