"""What the Messages API refuses in `image` and `document` blocks, with its own messages.

Sources: the API's 400 answers as quoted in public bug reports (anthropics/claude-code issues
#10612, #2438, #6300, #4778, #9375, #5707; anthropic-sdk-typescript #603; epam/ai-dial-adapter-bedrock
#306), the docs pages "Vision", "PDF support" and "Files API" (platform.claude.com), and the
anthropic SDK's error types (ImageDimensionsTooLargeError). Paths name the block's tags as the
API does (`messages.0.content.2.image.source.base64…`).

- A source tag the block does not have: `…image.source: Input tag 'x' found using 'type' does not
  match any of the expected tags: 'base64', 'file', 'url'` (documents: 'base64', 'content', 'file',
  'text', 'url'); an unknown key: `…: Extra inputs are not permitted`.
- Image `media_type` outside JPEG/PNG/GIF/WebP: `…image.source.base64.media_type: Input should be
  'image/jpeg', 'image/png', 'image/gif' or 'image/webp'`; a PDF's: `… Input should be 'application/pdf'`;
  a plain-text document's: `… Input should be 'text/plain'`.
- Base64 data over 5 MB (5,242,880 characters of base64): `…image.source.base64: image exceeds 5 MB
  maximum: N bytes > 5242880 bytes`; data that is not base64: `…source.base64: invalid base64 data`.
- Bytes of another format than declared: `…image.source.base64: The image was specified using the
  image/jpeg media type, but the image appears to be a image/png image` (the 2026 wording); bytes of
  no image format: `Could not process image`.
- A side over 8000 px (2000 px when the request holds more than 20 images): `…base64.data: At least
  one of the image dimensions exceed max allowed size: 8000 pixels` (`… for many-image requests:
  2000 pixels`), with `details` {error_code image_dimensions_too_large, max_side_length_pixels, paths}.
- A PDF that is not one: `The PDF specified was not valid.`; more than 100 PDF pages in the request:
  `A maximum of 100 PDF pages may be provided.` (pages counted as media.py says).
- An image or document in an assistant turn: `messages.N.content: 'image' blocks are not permitted
  within assistant turns.`
- A `file` source whose file_id the Files API does not hold: 404 `not_found_error`; one whose file
  is of the wrong kind for the block: 400. These two wordings are not quoted anywhere public: the
  fake's own (`File not found: file_…`, `…: file file_… is application/pdf, not an image`).
- More than 100 images: `A maximum of 100 images may be provided.` (limit from the Vision page; the
  wording is the fake's, after the PDF one).
The Files API is generally available: `file` sources need no beta header.
"""
from __future__ import annotations

import base64
import binascii
import json
from dataclasses import dataclass, field

from .media import image_size, image_type, is_pdf, pdf_pages

IMAGE_TYPES = ("image/jpeg", "image/png", "image/gif", "image/webp")
IMAGE_TYPES_TEXT = "'image/jpeg', 'image/png', 'image/gif' or 'image/webp'"
BASE64_IMAGE_LIMIT = 5 * 1024 * 1024
MAX_SIDE, MANY_IMAGES_SIDE, MANY_IMAGES = 8000, 2000, 20
MAX_IMAGES, MAX_PDF_PAGES = 100, 100
IMAGE_KEYS = {"type", "source", "cache_control"}
DOCUMENT_KEYS = {"type", "source", "title", "context", "citations", "cache_control"}
SOURCE_KEYS = {"base64": {"type", "media_type", "data"}, "url": {"type", "url"}, "file": {"type", "file_id"},
               "text": {"type", "media_type", "data"}, "content": {"type", "content"}}
PAYLOAD = {"base64": "data", "url": "url", "file": "file_id", "text": "data", "content": "content"}
IMAGE_SOURCES, DOCUMENT_SOURCES = ("base64", "file", "url"), ("base64", "content", "file", "text", "url")


@dataclass(frozen=True)
class Problem:
    message: str
    status: int = 400
    type: str = "invalid_request_error"
    details: dict | None = None


@dataclass
class _Tally:
    images: list = field(default_factory=list)  # (path, width, height) of each image
    pdf_pages: int = 0


def media_problem(request: dict, files=None) -> Problem | str | None:
    tally = _Tally()
    for i, message in enumerate(request["messages"]):
        if isinstance(message["content"], str):
            continue
        for j, block in enumerate(message["content"]):
            kind = block.get("type")
            if kind not in ("image", "document"):
                continue
            if message["role"] == "assistant":
                return f"messages.{i}.content: '{kind}' blocks are not permitted within assistant turns."
            check = _image if kind == "image" else _document
            found = check(block, f"messages.{i}.content.{j}", files or {}, tally)
            if found:
                return found
    return _totals(tally)


def _image(block: dict, path: str, files, tally: _Tally):
    source, where = block.get("source"), f"{path}.image"
    found = _shape(block, IMAGE_KEYS, where) or _source_shape(source, IMAGE_SOURCES, f"{where}.source")
    if found:
        return found
    kind, at = source["type"], f"{where}.source.{source['type']}"
    if kind == "url":
        return None
    if kind == "file":
        stored, found = _stored(source["file_id"], files, at)
        if found:
            return found
        if stored[0] not in IMAGE_TYPES:
            return f"{at}: file {source['file_id']} is {stored[0]}, not an image"
        data, declared = stored[1], stored[0]
    else:
        if source.get("media_type") not in IMAGE_TYPES:
            return f"{at}.media_type: Input should be {IMAGE_TYPES_TEXT}"
        if len(source["data"]) > BASE64_IMAGE_LIMIT:
            return f"{at}: image exceeds 5 MB maximum: {len(source['data'])} bytes > {BASE64_IMAGE_LIMIT} bytes"
        data, declared = _decoded(source["data"]), source["media_type"]
        if data is None:
            return f"{at}: invalid base64 data"
    actual = image_type(data)
    if actual is None:
        return "Could not process image"
    if actual != declared:
        return f"{at}: The image was specified using the {declared} media type, but the image appears to be a {actual} image"
    tally.images.append((f"{at}.data", *(image_size(data) or (0, 0))))
    return None


def _document(block: dict, path: str, files, tally: _Tally):
    source, where = block.get("source"), f"{path}.document"
    found = _shape(block, DOCUMENT_KEYS, where) or _source_shape(source, DOCUMENT_SOURCES, f"{where}.source")
    if found:
        return found
    for key in ("title", "context"):
        if block.get(key) is not None and not isinstance(block[key], str):
            return f"{where}.{key}: Input should be a valid string"
    kind, at = source["type"], f"{where}.source.{source['type']}"
    if kind == "text":
        if source.get("media_type") != "text/plain":
            return f"{at}.media_type: Input should be 'text/plain'"
        return None if isinstance(source["data"], str) else f"{at}.data: Input should be a valid string"
    if kind in ("url", "content"):
        return None
    if kind == "file":
        stored, found = _stored(source["file_id"], files, at)
        if found:
            return found
        if stored[0] not in ("application/pdf", "text/plain"):
            return f"{at}: file {source['file_id']} is {stored[0]}, not a PDF or plain text"
        data = stored[1] if stored[0] == "application/pdf" else None
    else:
        if source.get("media_type") != "application/pdf":
            return f"{at}.media_type: Input should be 'application/pdf'"
        data = _decoded(source["data"])
        if data is None:
            return f"{at}: invalid base64 data"
    if data is not None:
        if not is_pdf(data):
            return "The PDF specified was not valid."
        tally.pdf_pages += pdf_pages(data) or 0
    return None


def _shape(block: dict, keys: set[str], where: str) -> str | None:
    for key in block:
        if key not in keys:
            return f"{where}.{key}: Extra inputs are not permitted"
    if "source" not in block:
        return f"{where}.source: Field required"
    return None


def _source_shape(source, tags: tuple[str, ...], where: str) -> str | None:
    if not isinstance(source, dict):
        return f"{where}: Input should be a valid dictionary or object to extract fields from"
    kind = source.get("type")
    if kind not in tags:
        expected = ", ".join(f"'{t}'" for t in tags)
        return f"{where}: Input tag '{kind}' found using 'type' does not match any of the expected tags: {expected}"
    for key in source:
        if key not in SOURCE_KEYS[kind]:
            return f"{where}.{kind}.{key}: Extra inputs are not permitted"
    for key in sorted(SOURCE_KEYS[kind] - {"type"}):
        if key not in source:
            return f"{where}.{kind}.{key}: Field required"
    payload = PAYLOAD[kind]
    if kind in ("base64", "url", "file") and not isinstance(source[payload], str):
        return f"{where}.{kind}.{payload}: Input should be a valid string"
    return None


def _stored(file_id: str, files, at: str):
    stored = files.get(file_id)
    if stored is None:
        return None, Problem(f"File not found: {file_id}", 404, "not_found_error")
    return stored, None


def _decoded(data: str) -> bytes | None:
    try:
        return base64.b64decode(data, validate=True)
    except (binascii.Error, ValueError):
        return None


def _totals(tally: _Tally) -> Problem | str | None:
    if len(tally.images) > MAX_IMAGES:
        return f"A maximum of {MAX_IMAGES} images may be provided."
    many = len(tally.images) > MANY_IMAGES
    limit = MANY_IMAGES_SIDE if many else MAX_SIDE
    over = [path for path, width, height in tally.images if max(width, height) > limit]
    if over:
        kind = "max allowed size for many-image requests" if many else "max allowed size"
        return Problem(f"{over[0]}: At least one of the image dimensions exceed {kind}: {limit} pixels",
                       details={"error_code": "image_dimensions_too_large", "max_side_length_pixels": limit,
                                "paths": [p.rsplit(".image.", 1)[0] for p in over]})
    if tally.pdf_pages > MAX_PDF_PAGES:
        return f"A maximum of {MAX_PDF_PAGES} PDF pages may be provided."
    return None


def input_tokens(request: dict, files=None) -> int:
    """A plausible input token count: the request's JSON without media payloads at 4 characters a
    token (the fake's rule for text), plus each image at width·height/750 (the Vision page's rule,
    1,600 when its pixels are unknown) and each PDF page at 1,500."""
    media, messages = 0, []
    for message in request["messages"]:
        content = message["content"]
        if isinstance(content, list):
            content = [_without_payload(block) for block in content]
            media += sum(_media_tokens(block, files or {}) for block in message["content"])
        messages.append({**message, "content": content})
    return len(json.dumps(messages)) // 4 + media


def _without_payload(block):
    source = block.get("source") if isinstance(block, dict) else None
    if block.get("type") in ("image", "document") and isinstance(source, dict) and source.get("type") == "base64":
        return {**block, "source": {**source, "data": ""}}
    return block


def _media_tokens(block, files) -> int:
    kind, source = block.get("type"), block.get("source") or {}
    data = None
    if source.get("type") == "base64":
        data = _decoded(source.get("data", ""))
    elif source.get("type") == "file" and source.get("file_id") in files:
        data = files[source["file_id"]][1]
    if kind == "image":
        width, height = image_size(data or b"") or (0, 0)
        return max(1, width * height // 750) if width else 1600
    if kind == "document" and data is not None and is_pdf(data):
        return 1500 * (pdf_pages(data) or 1)
    return 0
