"""The fake Messages API checks images, documents and tools as the real one does, with its messages."""
import base64

import pytest

from tests.fakes.media import image_size, image_type, pdf_pages, tiny_pdf, tiny_png
from tests.fakes.messages_rules import problem, refusal

PNG = tiny_png(2, 3)
PDF = tiny_pdf(2)
FILES = {"file_png": ("image/png", PNG), "file_pdf": ("application/pdf", PDF), "file_txt": ("text/plain", b"hi"),
         "file_csv": ("text/csv", b"a,b")}


def b64(data: bytes) -> str:
    return base64.b64encode(data).decode()


def image(data=PNG, media_type="image/png", **extra):
    return {"type": "image", "source": {"type": "base64", "media_type": media_type, "data": b64(data)}, **extra}


def pdf(data=PDF, **extra):
    return {"type": "document", "source": {"type": "base64", "media_type": "application/pdf", "data": b64(data)},
            **extra}


def ask(*blocks, history=(), **fields):
    content = [*blocks, {"type": "text", "text": "what is this?"}]
    return {"model": "m", "max_tokens": 10, "messages": [*history, {"role": "user", "content": content}], **fields}


def test_the_bytes_are_read_for_format_size_and_pages():
    assert (image_type(PNG), image_size(PNG)) == ("image/png", (2, 3))
    gif = b"GIF89a" + (7).to_bytes(2, "little") + (9).to_bytes(2, "little") + b"\x00" * 10
    jpeg = b"\xff\xd8\xff\xe0\x00\x04ab\xff\xc0\x00\x11\x08" + (40).to_bytes(2, "big") + (30).to_bytes(2, "big")
    webp = b"RIFF\x00\x00\x00\x00WEBPVP8X" + b"\x00" * 8 + (99).to_bytes(3, "little") + (49).to_bytes(3, "little")
    assert [image_size(x) for x in (gif, jpeg, webp)] == [(7, 9), (30, 40), (100, 50)]
    assert [image_type(x) for x in (gif, jpeg, webp, b"%PDF-")] == ["image/gif", "image/jpeg", "image/webp", None]
    assert pdf_pages(tiny_pdf(1)) == 1 and pdf_pages(tiny_pdf(7)) == 7


def test_what_the_api_accepts_is_accepted():
    text_doc = {"type": "document", "source": {"type": "text", "media_type": "text/plain", "data": "log line"},
                "title": "app.log", "context": "shared by alice", "citations": {"enabled": True}}
    body = ask(image(), image(PNG, cache_control={"type": "ephemeral"}),
               pdf(title="report.pdf"), text_doc,
               {"type": "image", "source": {"type": "url", "url": "https://example.com/a.png"}},
               {"type": "image", "source": {"type": "file", "file_id": "file_png"}},
               {"type": "document", "source": {"type": "file", "file_id": "file_pdf"}},
               {"type": "document", "source": {"type": "file", "file_id": "file_txt"}})
    assert refusal(body, FILES) is None


@pytest.mark.parametrize("block, message", [
    (image(media_type="image/bmp"), "messages.0.content.0.image.source.base64.media_type: Input should be "
                                    "'image/jpeg', 'image/png', 'image/gif' or 'image/webp'"),
    ({"type": "image", "source": {"type": "base64", "media_type": "image/png", "data": "not base64!"}},
     "messages.0.content.0.image.source.base64: invalid base64 data"),
    (image(PNG, "image/jpeg"), "messages.0.content.0.image.source.base64: The image was specified using the "
                               "image/jpeg media type, but the image appears to be a image/png image"),
    (image(b"just text", "image/png"), "Could not process image"),
    ({"type": "image", "source": {"type": "base64", "media_type": "image/png", "data": "A" * (5 * 1024 * 1024 + 4)}},
     "messages.0.content.0.image.source.base64: image exceeds 5 MB maximum: 5242884 bytes > 5242880 bytes"),
    ({"type": "image", "source": {"type": "path", "path": "/tmp/a.png"}},
     "messages.0.content.0.image.source: Input tag 'path' found using 'type' does not match any of the expected "
     "tags: 'base64', 'file', 'url'"),
    (image(alt="a chart"), "messages.0.content.0.image.alt: Extra inputs are not permitted"),
    ({"type": "image", "source": {"type": "base64", "data": b64(PNG)}},
     "messages.0.content.0.image.source.base64.media_type: Field required"),
    ({"type": "document", "source": {"type": "base64", "media_type": "application/x-pdf", "data": b64(PDF)}},
     "messages.0.content.0.document.source.base64.media_type: Input should be 'application/pdf'"),
    (pdf(b"<html>not a pdf</html>"), "The PDF specified was not valid."),
    ({"type": "document", "source": {"type": "text", "media_type": "text/csv", "data": "a,b"}},
     "messages.0.content.0.document.source.text.media_type: Input should be 'text/plain'"),
    (pdf(title=7), "messages.0.content.0.document.title: Input should be a valid string"),
    ({"type": "document", "source": {"type": "file", "file_id": "file_csv"}},
     "messages.0.content.0.document.source.file: file file_csv is text/csv, not a PDF or plain text"),
    ({"type": "image", "source": {"type": "file", "file_id": "file_pdf"}},
     "messages.0.content.0.image.source.file: file file_pdf is application/pdf, not an image"),
])
def test_a_block_the_api_refuses_is_refused_with_its_message(block, message):
    assert refusal(ask(block), FILES) == message


def test_an_unknown_file_id_is_a_404():
    found = problem(ask({"type": "document", "source": {"type": "file", "file_id": "file_gone"}}), FILES)
    assert (found.status, found.type, found.message) == (404, "not_found_error", "File not found: file_gone")


def test_an_image_in_an_assistant_turn_is_refused():
    history = [{"role": "user", "content": "draw"}, {"role": "assistant", "content": [image()]}]
    assert refusal(ask(history=history)) == "messages.1.content: 'image' blocks are not permitted within assistant turns."


def test_request_wide_limits_pixels_images_and_pdf_pages():
    wide = problem(ask(image(tiny_png(8001, 1))))
    assert wide.message == ("messages.0.content.0.image.source.base64.data: At least one of the image dimensions "
                            "exceed max allowed size: 8000 pixels")
    assert wide.details == {"error_code": "image_dimensions_too_large", "max_side_length_pixels": 8000,
                            "paths": ["messages.0.content.0"]}
    assert refusal(ask(image(tiny_png(8000, 1)))) is None
    many = [image(tiny_png(2001, 1))] + [image()] * 20
    assert problem(ask(*many)).details["max_side_length_pixels"] == 2000
    assert refusal(ask(*many[:20])) is None
    assert refusal(ask(*[image()] * 101)) == "A maximum of 100 images may be provided."
    assert refusal(ask(pdf(tiny_pdf(60)), pdf(tiny_pdf(41)))) == "A maximum of 100 PDF pages may be provided."
    assert refusal(ask(pdf(tiny_pdf(60)), pdf(tiny_pdf(40)))) is None


@pytest.mark.parametrize("tools, message", [
    ({"type": "web_search_20250305", "name": "web_search"}, "tools: Input should be a valid list"),
    ([{"type": "web_search_20250305", "name": "search"}], "tools.0.web_search_20250305.name: Input should be 'web_search'"),
    ([{"type": "web_fetch_20250910", "name": "web_fetch", "max_uses": 0}],
     "tools.0.web_fetch_20250910.max_uses: Input should be greater than 0"),
    ([{"type": "web_search_20250305", "name": "web_search", "max_results": 3}],
     "tools.0.web_search_20250305.max_results: Extra inputs are not permitted"),
    ([{"name": "lookup", "description": "a custom tool"}], "tools.0.custom.input_schema: Field required"),
    ([{"type": "web_search_20250305", "name": "web_search"}, {"type": "web_search_20260209", "name": "web_search"}],
     "tools: Tool names must be unique."),
])
def test_malformed_tools_are_refused(tools, message):
    assert refusal(ask(tools=tools)) == message


def test_an_unknown_tool_type_is_refused_with_the_types_the_api_knows():
    message = refusal(ask(tools=[{"type": "web_search_2025", "name": "web_search"}]))
    assert message.startswith("tools.0: Input tag 'web_search_2025' found using 'type' does not match any of the "
                              "expected tags: 'custom', ")
    assert "'web_search_20250305'" in message and "'web_fetch_20250910'" in message


def test_the_current_server_tools_are_accepted():
    tools = [{"type": "web_search_20250305", "name": "web_search", "max_uses": 5, "allowed_domains": ["python.org"]},
             {"type": "web_fetch_20250910", "name": "web_fetch", "max_uses": 3, "citations": {"enabled": True},
              "max_content_tokens": 50_000}]
    assert refusal(ask(tools=tools)) is None
    assert refusal(ask(tools=[{"type": "web_search_20260318", "name": "web_search"},
                              {"type": "web_fetch_20260318", "name": "web_fetch"}])) is None


def test_input_tokens_count_media_by_pixels_and_pages_not_by_base64_length():
    from tests.fakes.media_rules import input_tokens

    words = input_tokens(ask())
    emptied = len('{"type": "image", "source": {"type": "base64", "media_type": "image/png", "data": ""}}, ') / 4
    assert abs(input_tokens(ask(image(tiny_png(300, 250)))) - words - (300 * 250 // 750 + emptied)) <= 1
    assert input_tokens(ask(pdf(tiny_pdf(3)))) - input_tokens(ask(pdf(tiny_pdf(1)))) == 2 * 1500
    assert input_tokens(ask({"type": "image", "source": {"type": "file", "file_id": "file_png"}}), FILES) < \
        input_tokens(ask({"type": "image", "source": {"type": "url", "url": "https://a.example/x.png"}}))
