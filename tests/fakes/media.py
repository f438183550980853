"""What the fake Messages API reads from the bytes of an image or a PDF, cheaply and without
dependencies: the image format from its magic bytes, its pixel size from its header, and a PDF's
page count.

- Formats: PNG, JPEG, GIF and WebP, the four the API takes (anything else is "not an image").
- Sizes: PNG's IHDR, GIF's logical screen, JPEG's first SOFn frame, WebP's VP8/VP8L/VP8X header.
- PDF pages: the page objects (`/Type /Page`) the file holds in the clear; a PDF that keeps its
  page tree in compressed object streams shows none, and then the largest `/Count` is used, or None
  when that is hidden too (the fake then counts no pages for it rather than guess).
"""
from __future__ import annotations

import re
import struct
import zlib

MAGIC = ((b"\x89PNG\r\n\x1a\n", "image/png"), (b"\xff\xd8\xff", "image/jpeg"),
         (b"GIF87a", "image/gif"), (b"GIF89a", "image/gif"))
# JPEG start-of-frame markers (C4, C8 and CC are other segments)
SOF = {0xC0, 0xC1, 0xC2, 0xC3, 0xC5, 0xC6, 0xC7, 0xC9, 0xCA, 0xCB, 0xCD, 0xCE, 0xCF}


def image_type(data: bytes) -> str | None:
    for magic, media_type in MAGIC:
        if data.startswith(magic):
            return media_type
    if data[:4] == b"RIFF" and data[8:12] == b"WEBP":
        return "image/webp"
    return None


def image_size(data: bytes) -> tuple[int, int] | None:
    """(width, height) in pixels, or None when the header cannot be read."""
    try:
        kind = image_type(data)
        if kind == "image/png":
            return struct.unpack(">II", data[16:24])
        if kind == "image/gif":
            return struct.unpack("<HH", data[6:10])
        if kind == "image/jpeg":
            return _jpeg_size(data)
        if kind == "image/webp":
            return _webp_size(data)
    except struct.error:
        return None
    return None


def _jpeg_size(data: bytes) -> tuple[int, int] | None:
    at = 2
    while at + 9 <= len(data):
        if data[at] != 0xFF:
            return None
        marker = data[at + 1]
        if marker in SOF:
            height, width = struct.unpack(">HH", data[at + 5:at + 9])
            return width, height
        at += 2 + struct.unpack(">H", data[at + 2:at + 4])[0]
    return None


def _webp_size(data: bytes) -> tuple[int, int] | None:
    chunk = data[12:16]
    if chunk == b"VP8 ":
        width, height = struct.unpack("<HH", data[26:30])
        return width & 0x3FFF, height & 0x3FFF
    if chunk == b"VP8L":
        bits = int.from_bytes(data[21:25], "little")
        return (bits & 0x3FFF) + 1, ((bits >> 14) & 0x3FFF) + 1
    if chunk == b"VP8X":
        return int.from_bytes(data[24:27], "little") + 1, int.from_bytes(data[27:30], "little") + 1
    return None


def is_pdf(data: bytes) -> bool:
    return data.lstrip(b"\r\n\t ").startswith(b"%PDF-")


def pdf_pages(data: bytes) -> int | None:
    pages = len(re.findall(rb"/Type\s*/Page(?![A-Za-z])", data))
    if pages:
        return pages
    counts = [int(n) for n in re.findall(rb"/Count\s+(\d+)", data)]
    return max(counts) if counts else None


def tiny_pdf(pages: int = 1, text: str = "Hello") -> bytes:
    """A valid, uncompressed PDF with `pages` pages, each showing `text`: test material."""
    objects = ["<< /Type /Catalog /Pages 2 0 R >>",
               "<< /Type /Pages /Kids [" + " ".join(f"{4 + i} 0 R" for i in range(pages)) + f"] /Count {pages} >>",
               "<< /Type /Font /Subtype /Type1 /BaseFont /Helvetica >>"]
    stream = f"BT /F1 24 Tf 72 720 Td ({text}) Tj ET"
    content = 4 + pages
    objects += [f"<< /Type /Page /Parent 2 0 R /MediaBox [0 0 612 792] /Contents {content} 0 R "
                "/Resources << /Font << /F1 3 0 R >> >> >>" for _ in range(pages)]
    objects.append(f"<< /Length {len(stream)} >>\nstream\n{stream}\nendstream")
    out, offsets = b"%PDF-1.4\n", []
    for number, body in enumerate(objects, 1):
        offsets.append(len(out))
        out += f"{number} 0 obj\n{body}\nendobj\n".encode()
    xref = len(out)
    out += f"xref\n0 {len(objects) + 1}\n0000000000 65535 f \n".encode()
    out += b"".join(f"{offset:010d} 00000 n \n".encode() for offset in offsets)
    out += f"trailer\n<< /Size {len(objects) + 1} /Root 1 0 R >>\nstartxref\n{xref}\n%%EOF\n".encode()
    return out


def tiny_png(width: int = 1, height: int = 1) -> bytes:
    """A valid PNG of that size (one grey channel, all black): test material."""
    def chunk(kind: bytes, body: bytes) -> bytes:
        return struct.pack(">I", len(body)) + kind + body + struct.pack(">I", zlib.crc32(kind + body))

    rows = b"".join(b"\x00" + b"\x00" * width for _ in range(height))
    return (b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", struct.pack(">IIBBBBB", width, height, 8, 0, 0, 0, 0))
            + chunk(b"IDAT", zlib.compress(rows)) + chunk(b"IEND", b""))
