"""The kept-alive connections' answers (bot/responses.py) read exactly as http.client reads the same bytes:
status, headers as callers look them up, chunked, length and whether the connection closes."""
import http.client
import io

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from bot.responses import Response


class _Socket:
    def __init__(self, data: bytes):
        self.data = data

    def makefile(self, mode):
        return io.BytesIO(self.data)


def both(raw: bytes, method: str = "POST"):
    theirs, ours = http.client.HTTPResponse(_Socket(raw), method=method), Response(_Socket(raw), method=method)
    theirs.begin()
    ours.begin()
    return theirs, ours


def same(theirs, ours, names=()):
    assert (ours.status, ours.reason, ours.version) == (theirs.status, theirs.reason, theirs.version)
    assert (ours.chunked, ours.length, ours.will_close) == (theirs.chunked, theirs.length, theirs.will_close)
    assert ours.getheaders() == theirs.getheaders()
    for name in names:
        assert ours.getheader(name) == theirs.getheader(name)
        assert ours.headers.get_all(name) == theirs.headers.get_all(name)
        assert ours.headers[name] == theirs.headers[name]
    assert ours.headers.get_content_charset() == theirs.headers.get_content_charset()


SLACK = (b"HTTP/1.1 200 OK\r\nContent-Type: application/json; charset=utf-8\r\nContent-Length: 11\r\n"
         b"x-oauth-scopes: chat:write,reactions:write\r\nVary: Accept-Encoding\r\n\r\n{\"ok\":true}")


@pytest.mark.parametrize("raw, method", [
    (SLACK, "POST"),
    (b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\nContent-Type: text/event-stream\r\n\r\n0\r\n\r\n", "POST"),
    (b"HTTP/1.1 429 Too Many Requests\r\nRetry-After: 7\r\nContent-Length: 2\r\nConnection: close\r\n\r\n{}", "POST"),
    (b"HTTP/1.1 200 OK\r\nContent-Type: text/plain\r\n\r\nuntil the end", "POST"),  # no length: it closes
    (b"HTTP/1.0 200 OK\r\nKeep-Alive: timeout=5\r\nContent-Length: 0\r\n\r\n", "POST"),
    (b"HTTP/1.0 200 OK\r\nContent-Length: 2\r\n\r\nok", "POST"),
    (b"HTTP/1.1 204 No Content\r\n\r\n", "POST"),
    (b"HTTP/1.1 200 OK\r\nContent-Length: 5\r\n\r\n", "HEAD"),
    (b"HTTP/1.1 100 Continue\r\nX-Skipped: 1\r\n\r\nHTTP/1.1 201 Created\r\nContent-Length: 0\r\n\r\n", "POST"),
    (b"HTTP/1.1 200 OK\r\nSet-Cookie: a=1\r\nset-cookie: b=2\r\nX-Folded: one\r\n  two\r\nContent-Length: -3\r\n\r\n",
     "POST"),
])
def test_an_answer_reads_as_http_client_reads_it(raw, method):
    theirs, ours = both(raw, method)
    same(theirs, ours, ["content-type", "SET-COOKIE", "retry-after", "x-folded", "missing", "x-skipped"])
    assert ours.read() == theirs.read()


def test_a_header_line_too_long_is_refused_as_http_client_refuses_it():
    raw = b"HTTP/1.1 200 OK\r\nX-Long: " + b"a" * 70_000 + b"\r\n\r\n"
    for response in (http.client.HTTPResponse(_Socket(raw)), Response(_Socket(raw))):
        with pytest.raises(http.client.LineTooLong):
            response.begin()


names = st.sampled_from(["Content-Type", "content-length", "Transfer-Encoding", "Connection", "Retry-After",
                         "X-Slack-Req-Id", "Keep-Alive", "x-custom"])
values = st.sampled_from(["chunked", "close", "keep-alive", "12", "0", "-1", "application/json; charset=utf-8",
                          "text/event-stream", "abc", "", "Keep-Alive, close", "trailing  ", "  lead", "ünï"])


@settings(max_examples=200, deadline=None)
@given(version=st.sampled_from(["HTTP/1.1", "HTTP/1.0"]), status=st.sampled_from([200, 204, 304, 404, 500]),
       headers=st.lists(st.tuples(names, values), max_size=6))
def test_any_headers_read_as_http_client_reads_them(version, status, headers):
    raw = (f"{version} {status} Whatever\r\n" + "".join(f"{n}: {v}\r\n" for n, v in headers) + "\r\n").encode("latin-1")
    theirs, ours = both(raw + b"0\r\n\r\n")
    same(theirs, ours, [n for n, _ in headers])
