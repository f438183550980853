"""http.client's answer, its headers read without the email parser: the response class of the kept-alive
connections (keepalive.py).

Why: `http.client` reads every answer's headers through `email.parser` and looks each one up through an
email policy; for a Slack call that was a quarter of the client's CPU (one call's client CPU 0.20–0.23 ms).

Invariants:
- The answer is what `http.client.HTTPResponse` makes of the same bytes: status, reason, version, chunked,
  length and will_close decided by its rules (its `_check_close` included), the same limits on a header line
  and on their number, values decoded as ISO-8859-1 and kept as the email parser keeps them.
- `headers` is an `http.client.HTTPMessage` (`get`, `get_all`, `items`, `get_content_charset`… as callers use
  them); names are looked up case-insensitively, the first of a repeated one as `get` gives it.
- A line with no colon is skipped (the email parser would count it as a defect, or as the body).
"""
from __future__ import annotations

import http.client


class Headers(http.client.HTTPMessage):
    def get(self, name, failobj=None):
        name = name.lower()
        for key, value in self._headers:
            if key.lower() == name:
                return value
        return failobj

    def __getitem__(self, name):
        return self.get(name)

    def get_all(self, name, failobj=None):
        name = name.lower()
        found = [value for key, value in self._headers if key.lower() == name]
        return found or failobj


def read_headers(fp) -> Headers:
    """As the email parser's compat32 policy stores them: the value after the colon with its leading blanks
    dropped, a folded line kept with its line break, the last line break dropped."""
    headers = Headers()
    lines = http.client._read_headers(fp)  # noqa: SLF001 - its limits on line length and count, as parse_headers
    for raw in lines:
        line = raw.decode("iso-8859-1")
        if line in ("\r\n", "\n", ""):
            break
        if line[0] in " \t" and headers._headers:  # a folded line continues the header before it
            name, value = headers._headers[-1]
            headers._headers[-1] = (name, value + "\r\n" + line.rstrip("\r\n"))
            continue
        name, colon, value = line.partition(":")
        if colon:
            headers._headers.append((name, value.lstrip(" \t").rstrip("\r\n")))
    return headers


class Response(http.client.HTTPResponse):
    def begin(self) -> None:
        if self.headers is not None:
            return
        while True:
            version, status, reason = self._read_status()
            if status != http.client.CONTINUE:
                break
            http.client._read_headers(self.fp)  # noqa: SLF001 - a 100 Continue's headers, skipped
        self.code = self.status = status
        self.reason = reason.strip()
        if version in ("HTTP/1.0", "HTTP/0.9"):
            self.version = 10
        elif version.startswith("HTTP/1."):
            self.version = 11
        else:
            raise http.client.UnknownProtocol(version)
        self.headers = self.msg = read_headers(self.fp)
        encoding = self.headers.get("transfer-encoding")
        self.chunked = bool(encoding) and encoding.lower() == "chunked"
        self.chunk_left = None
        self.will_close = self._check_close()
        self.length = None
        length = self.headers.get("content-length")
        if length and not self.chunked:
            try:
                self.length = int(length)
            except ValueError:
                self.length = None
            else:
                if self.length < 0:
                    self.length = None
        if status in (http.client.NO_CONTENT, http.client.NOT_MODIFIED) or 100 <= status < 200 \
                or self._method == "HEAD":
            self.length = 0
        if not self.will_close and not self.chunked and self.length is None:
            self.will_close = True
