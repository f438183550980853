"""The fake Anthropic serves the Files API as the real one does, driven by the real anthropic SDK,
and Messages requests may name its files in `file` sources."""
import base64
import json
import urllib.error
import urllib.request

import anthropic
import pytest

from tests.fakes.anthropic_api import FakeAnthropic
from tests.fakes.media import tiny_pdf, tiny_png

FILES_BETA = "files-api-2025-04-14"


@pytest.fixture
def fake():
    running = FakeAnthropic().start()
    yield running
    running.stop()


@pytest.fixture
def client(fake):
    return anthropic.Anthropic(api_key="sk-ant-test-key-not-real", base_url=fake.url, max_retries=0)


def ask(*blocks):
    return {"model": "claude-test", "max_tokens": 50,
            "messages": [{"role": "user", "content": [*blocks, {"type": "text", "text": "what is it?"}]}]}


def test_an_upload_through_the_sdk_keeps_the_bytes_and_answers_the_file_object(fake, client):
    pdf = tiny_pdf(3)
    uploaded = client.beta.files.upload(file=("report.pdf", pdf, "application/pdf"))
    assert uploaded.id.startswith("file_") and uploaded.type == "file"
    assert (uploaded.filename, uploaded.mime_type, uploaded.size_bytes, uploaded.downloadable) == \
        ("report.pdf", "application/pdf", len(pdf), False)
    assert uploaded.created_at.tzinfo is not None and uploaded.expires_at is None
    assert fake.files.files[uploaded.id].data == pdf
    assert [(u.file_id, u.filename, u.size, u.beta) for u in fake.files.uploads] == \
        [(uploaded.id, "report.pdf", len(pdf), False)]
    ga = client.files.upload(file=("shot.png", tiny_png(4, 4), "image/png"))
    assert ga.mime_type == "image/png" and client.files.retrieve_metadata(ga.id).id == ga.id
    assert fake.rejections == []


def test_the_beta_header_is_optional_and_still_gets_the_beta_shapes(fake, client):
    first = client.beta.files.upload(file=("a.txt", b"alpha", "text/plain"), betas=[FILES_BETA])
    assert fake.files.uploads[-1].beta is True
    second = client.files.upload(file=("b.txt", b"beta", "text/plain"))
    request = urllib.request.Request(fake.url + "/v1/files?limit=1", headers={"anthropic-beta": FILES_BETA})
    with urllib.request.urlopen(request, timeout=5) as response:
        page = json.loads(response.read())
    assert page["data"][0]["id"] == second.id and "expires_at" not in page["data"][0]
    assert (page["first_id"], page["last_id"], page["has_more"]) == (second.id, second.id, True)
    listed = client.files.list(limit=1)
    assert [f.id for f in listed.data] == [second.id] and listed.next_page
    assert [f.id for f in client.files.list()] == [second.id, first.id]
    assert [item.id for page in client.files.list(limit=1).iter_pages() for item in page.data] == [second.id, first.id]
    assert [f.id for f in client.files.list(ids=[first.id]).data] == [first.id]


def test_delete_then_the_file_is_gone_for_metadata_and_for_messages(fake, client):
    stored = client.files.upload(file=("notes.txt", b"remember this", "text/plain"))
    block = {"type": "document", "source": {"type": "file", "file_id": stored.id}}
    assert client.messages.create(**ask(block)).content[0].text == "Answer 1"
    deleted = client.files.delete(stored.id)
    assert (deleted.id, deleted.type) == (stored.id, "file_deleted")
    with pytest.raises(anthropic.NotFoundError):
        client.files.retrieve_metadata(stored.id)
    with pytest.raises(anthropic.NotFoundError) as refused:
        client.messages.create(**ask(block))
    assert refused.value.body["error"] == {"type": "not_found_error", "message": f"File not found: {stored.id}"}
    assert fake.rejections == [f"GET /v1/files/{stored.id}: File not found: {stored.id}",
                               f"request 2: File not found: {stored.id}"]


def test_file_sources_are_checked_against_what_the_file_holds(fake, client):
    png = client.files.upload(file=("chart.png", tiny_png(2, 2), "image/png"))
    pdf = client.files.upload(file=("spec.pdf", tiny_pdf(1), "application/pdf"))
    good = ask({"type": "image", "source": {"type": "file", "file_id": png.id}},
               {"type": "document", "source": {"type": "file", "file_id": pdf.id}, "title": "spec.pdf"})
    assert client.messages.create(**good).content[0].text == "Answer 1"
    with pytest.raises(anthropic.BadRequestError) as refused:
        client.messages.create(**ask({"type": "image", "source": {"type": "file", "file_id": pdf.id}}))
    assert refused.value.body["error"]["message"].endswith(f"file {pdf.id} is application/pdf, not an image")


def test_an_image_too_wide_is_refused_with_the_apis_error_code(fake, client):
    wide = base64.b64encode(tiny_png(8001, 1)).decode()
    with pytest.raises(anthropic.BadRequestError) as refused:
        client.messages.create(**ask({"type": "image", "source": {"type": "base64", "media_type": "image/png",
                                                                   "data": wide}}))
    assert refused.value.error_code == "image_dimensions_too_large"
    assert refused.value.body["error"]["details"]["paths"] == ["messages.0.content.0"]
    fake.rejections.clear()


def test_a_request_over_32_mb_is_413_and_an_empty_beta_name_is_refused(fake):
    fake.request_limit = 1_000
    body = json.dumps(ask({"type": "text", "text": "x" * 2_000})).encode()
    post = urllib.request.Request(fake.url + "/v1/messages", data=body, headers={"Content-Type": "application/json"})
    with pytest.raises(urllib.error.HTTPError) as too_large:
        urllib.request.urlopen(post, timeout=5)
    assert too_large.value.code == 413
    assert json.loads(too_large.value.read()) == {
        "error": {"type": "request_too_large", "message": "Request exceeds the maximum size"}}
    fake.request_limit = 10_000_000
    post = urllib.request.Request(fake.url + "/v1/messages", data=body, headers={
        "Content-Type": "application/json", "anthropic-beta": f"{FILES_BETA},"})
    with pytest.raises(urllib.error.HTTPError) as bad_beta:
        urllib.request.urlopen(post, timeout=5)
    assert bad_beta.value.code == 400 and "Unexpected value(s) ``" in json.loads(bad_beta.value.read())["error"]["message"]
    assert len(fake.rejections) == 2 and fake.requests == []


def test_each_request_records_its_tools_and_betas(fake, client):
    client.messages.create(**ask())
    tools = [{"type": "web_search_20250305", "name": "web_search", "max_uses": 2}]
    client.messages.create(**ask(), tools=tools, extra_headers={"anthropic-beta": FILES_BETA})
    assert fake.tools_sent == [None, tools]
    assert fake.betas == [set(), {FILES_BETA}]


def test_a_message_of_only_an_image_is_answered_and_its_texts_are_its_text_blocks(fake, client):
    from tests.fakes.anthropic_api import last_user_text, request_texts

    png = base64.b64encode(tiny_png(2, 2)).decode()
    only = {"model": "claude-test", "max_tokens": 50, "messages": [{"role": "user", "content": [
        {"type": "image", "source": {"type": "base64", "media_type": "image/png", "data": png}}]}]}
    assert client.messages.create(**only).content[0].text == "Answer 1"
    assert request_texts(fake.requests[0]) == [] and last_user_text(fake.requests[0]) == ""
    assert fake.rejections == []
