"""The fake Slack serves files as Slack does: a file object for the message event, private URLs
that give the bytes only to the bot's token (and the sign-in page otherwise), scripted refusals,
deletion as Slack's events, and `files.info` through slack-sdk's own client."""
import urllib.error
import urllib.request

import pytest
from slack_sdk import WebClient
from slack_sdk.errors import SlackApiError

from tests.fakes.slack_api import TEAM_ID, FakeSlack

PNG = b"\x89PNG\r\n\x1a\n" + b"\x00" * 40
TOKEN = "xoxb-test-token-not-real"


@pytest.fixture
def fake():
    running = FakeSlack().start()
    yield running
    running.stop()


def get(url: str, token: str | None = TOKEN):
    headers = {"Authorization": f"Bearer {token}"} if token else {}
    try:
        with urllib.request.urlopen(urllib.request.Request(url, headers=headers), timeout=5) as response:
            return response.status, response.headers, response.read()
    except urllib.error.HTTPError as error:
        return error.code, error.headers, error.read()


def test_a_shared_file_is_the_object_a_message_event_carries(fake):
    file = fake.share_file("chart one.png", PNG, "image/png", user="UALICE01")
    assert file["id"].startswith("F") and file["name"] == file["title"] == "chart one.png"
    assert (file["mimetype"], file["filetype"], file["pretty_type"]) == ("image/png", "png", "PNG")
    assert file["size"] == len(PNG) and file["mode"] == "hosted" and file["user"] == "UALICE01"
    assert file["url_private"] == f"{fake.server.url}/files-pri/{TEAM_ID}-{file['id']}/chart%20one.png"
    assert file["url_private_download"] == f"{fake.server.url}/files-pri/{TEAM_ID}-{file['id']}/download/chart%20one.png"
    assert isinstance(file["created"], int) and file["timestamp"] == file["created"]
    pdf = fake.share_file("report.pdf", b"%PDF-1.4", "application/pdf")
    notes = fake.share_file("notes.md", b"# hi", "text/plain", filetype="markdown")
    assert (pdf["filetype"], pdf["pretty_type"]) == ("pdf", "PDF")
    assert (notes["filetype"], notes["pretty_type"]) == ("markdown", "Markdown (raw)")


def test_the_bytes_go_only_to_the_bots_token_and_otherwise_slack_shows_its_sign_in_page(fake):
    file = fake.share_file("chart.png", PNG, "image/png")
    status, headers, body = get(file["url_private_download"])
    assert (status, body, headers["Content-Type"], headers["Content-Length"]) == (200, PNG, "image/png", str(len(PNG)))
    assert "attachment" in headers["Content-Disposition"]
    assert get(file["url_private"])[2] == PNG
    for token in (None, "xoxp-a-user-token"):
        status, headers, body = get(file["url_private_download"], token)
        assert status == 200 and headers["Content-Type"].startswith("text/html") and b"Sign in" in body
    recorded = fake.downloads_of(file["id"])
    assert [(d.token, d.status, d.served) for d in recorded] == [
        (TOKEN, 200, True), (TOKEN, 200, True), (None, 200, False), ("xoxp-a-user-token", 200, False)]
    assert recorded[0].url == file["url_private_download"] and recorded[0].at <= recorded[1].at
    assert len(fake.downloads_of(file["id"], served=True)) == 2


def test_a_fake_given_the_bot_token_serves_that_token_only():
    fake = FakeSlack(bot_token=TOKEN).start()
    try:
        file = fake.share_file("a.txt", b"hello", "text/plain")
        assert get(file["url_private_download"])[2] == b"hello"
        assert b"Sign in" in get(file["url_private_download"], "xoxb-another-bot")[2]
    finally:
        fake.stop()


@pytest.mark.parametrize("how, status", [(403, 403), (404, 404), ("login", 200)])
def test_a_download_can_be_refused_per_file(fake, how, status):
    refused = fake.share_file("a.pdf", b"%PDF-1.7 ...", "application/pdf", refuse=how)
    other = fake.share_file("b.pdf", b"%PDF-1.7 ...", "application/pdf")
    answer = get(refused["url_private_download"])
    assert answer[0] == status and answer[1]["Content-Type"].startswith("text/html") and answer[2] != b"%PDF-1.7 ..."
    assert get(other["url_private_download"])[2] == b"%PDF-1.7 ..."
    fake.refuse_download(refused["id"], None)
    assert get(refused["url_private_download"])[2] == b"%PDF-1.7 ..."
    with pytest.raises(ValueError):
        fake.refuse_download(refused["id"], 500)


def test_a_deleted_file_is_gone_and_slack_says_so_with_its_events(fake):
    kept = fake.share_file("keep.txt", b"kept", "text/plain")
    gone = fake.share_file("gone.png", PNG, "image/png")
    message = {"type": "message", "subtype": "file_share", "channel": "C0GENERAL01", "user": "UALICE01",
               "text": "two files", "ts": "1700000001.000001", "event_ts": "1700000001.000001",
               "channel_type": "channel", "files": [kept, gone]}
    deletion = fake.delete_file(gone["id"], message)
    assert deletion.file_deleted == {"type": "file_deleted", "file_id": gone["id"], "channel_ids": ["C0GENERAL01"],
                                     "event_ts": deletion.file_deleted["event_ts"]}
    changed = deletion.message_changed
    assert (changed["type"], changed["subtype"], changed["channel"], changed["hidden"]) == \
        ("message", "message_changed", "C0GENERAL01", True)
    assert changed["message"]["ts"] == message["ts"] and changed["message"]["text"] == "two files"
    assert changed["message"]["files"] == [kept, {"id": gone["id"], "mode": "tombstone"}]
    assert changed["previous_message"]["files"] == [kept, gone]
    assert get(gone["url_private_download"])[0] == 404
    assert get(kept["url_private_download"])[2] == b"kept"
    assert fake.delete_file(kept["id"]).message_changed is None


def test_files_info_answers_from_the_registry_through_slack_sdk(fake):
    client = WebClient(token=TOKEN, base_url=fake.api_url)
    file = fake.share_file("data.csv", b"a,b\n1,2\n", "text/csv")
    assert client.files_info(file=file["id"])["file"] == file
    fake.delete_file(file["id"])
    with pytest.raises(SlackApiError) as deleted:
        client.files_info(file=file["id"])
    assert deleted.value.response["error"] == "file_deleted"
    with pytest.raises(SlackApiError) as unknown:
        client.files_info(file="F0NOSUCHFILE")
    assert unknown.value.response["error"] == "file_not_found"
    assert fake.violations == []
    with pytest.raises(SlackApiError):
        client.api_call("files.info", params={})
    assert fake.violations == ["files.info: missing ['file']"]


def test_a_slack_connect_file_arrives_as_its_stub_and_files_info_gives_the_whole_file(fake):
    client = WebClient(token=TOKEN, base_url=fake.api_url)
    stub = fake.share_file("plan.png", PNG, "image/png", connect="visible")
    assert stub == {"id": stub["id"], "mode": "file_access", "file_access": "check_file_info", "created": 0,
                    "timestamp": 0, "user": ""}
    file = client.files_info(file=stub["id"])["file"]
    assert file["file_access"] == "visible" and file["name"] == "plan.png"
    assert get(file["url_private_download"])[2] == PNG


def test_a_slack_connect_file_kept_from_apps_is_not_found_and_none_of_its_urls_serve(fake):
    client = WebClient(token=TOKEN, base_url=fake.api_url)
    stub = fake.share_file("secret.pdf", b"%PDF-1.4", "application/pdf", connect="hidden")
    with pytest.raises(SlackApiError) as hidden:
        client.files_info(file=stub["id"])
    assert hidden.value.response["error"] == "file_not_found" and fake.violations == []
    guessed = fake.files.file_object(stub["id"])["url_private_download"]  # a URL the app was never given
    assert get(guessed)[0] == 404
    with pytest.raises(ValueError):
        fake.share_file("x.png", PNG, "image/png", connect="maybe")
