"""Claude's API over kept-alive http.client connections (bot/keepalive.py): an httpx transport for the SDK.

Why: the SDK's own transport (httpcore) walks every connection of its pool on each request and each
release; with 200 answers streaming at once that and its reading of each SSE chunk cost more CPU per answer
than everything Threadfork stores (docs/benchmarks.md, "Run of 2026-12-05").

Invariants:
- Only the transport changes: the SDK still builds every request, retries, turns statuses into its errors
  and decodes the event stream; httpx still decodes the body (gzip) and follows the SDK's settings.
- A body is handed on as it arrives (read1), so an event is read the moment its bytes come.
- Failures are httpx's: a connection not made is ConnectError (ConnectTimeout), a request not sent WriteError,
  a read that waited too long ReadTimeout, a connection lost or a broken answer RemoteProtocolError — so the
  SDK retries and reports them as it would its own.
- A connection goes back to the pool only after its answer was read whole; an answer closed before its end
  (a stop, an error) closes its connection.
- The answer's `network_stream` extension hands over its socket: shutting it down wakes a reader at once
  (claude.py's Stop).
- A proxy named in the environment (HTTPS_PROXY, ALL_PROXY…) is honoured: httpx drops those for a client given
  a transport, so such a client keeps httpx's own (`http_client`).
"""
from __future__ import annotations

import http.client
import socket
import urllib.request
from contextlib import contextmanager

import anthropic
import httpx2

from ..keepalive import KeptAlive, Origin
from ..tls import tls_context

POOL_SIZE = 256  # idle connections kept: one per answer streaming at once, beyond it they are closed after use
CHUNK = 65_536
# TCP keep-alive probes on a long, quiet stream (a long think), as the SDK's own transport sets them
KEEPALIVE = tuple(option for option in (
    (socket.SOL_SOCKET, socket.SO_KEEPALIVE, 1),
    (socket.IPPROTO_TCP, getattr(socket, "TCP_KEEPINTVL", None), 60),
    (socket.IPPROTO_TCP, getattr(socket, "TCP_KEEPCNT", None), 5)) if option[1] is not None)


def http_client() -> httpx2.Client:
    """The SDK's client with the SDK's defaults, on kept-alive connections unless a proxy is to be used."""
    if {"http", "https", "all"} & set(urllib.request.getproxies()):
        return anthropic.DefaultHttpxClient(verify=tls_context())
    return anthropic.DefaultHttpxClient(verify=tls_context(), transport=KeptAliveTransport())


class KeptAliveTransport(httpx2.BaseTransport):
    def __init__(self, pool: KeptAlive | None = None):
        self.pool = pool or KeptAlive(POOL_SIZE, tls_context(), socket_options=KEEPALIVE)

    def handle_request(self, request: httpx2.Request) -> httpx2.Response:
        timeouts = request.extensions.get("timeout", {})
        connection, origin, _ = self.pool.connection(str(request.url), timeouts.get("connect"))
        fresh = connection.sock is None
        try:
            _send(connection, request, fresh)
            if connection.sock is not None:
                connection.sock.settimeout(timeouts.get("read"))
            response = _answer(connection)
        except BaseException:
            connection.close()
            raise
        return httpx2.Response(response.status, headers=response.getheaders(),
                               stream=_Body(self.pool, origin, connection, response),
                               extensions={"http_version": b"HTTP/1.1", "reason_phrase": response.reason.encode(),
                                           "network_stream": _Network(connection)})


def _send(connection: http.client.HTTPConnection, request: httpx2.Request, fresh: bool) -> None:
    try:
        connection.putrequest(request.method, request.url.raw_path.decode("ascii"), skip_host=True,
                              skip_accept_encoding=True)
        for name, value in request.headers.raw:
            connection.putheader(name, value)
        connection.endheaders(request.read())
    except TimeoutError as error:
        raise (httpx2.ConnectTimeout if fresh else httpx2.WriteTimeout)(str(error)) from error
    except OSError as error:
        raise (httpx2.ConnectError if fresh and connection.sock is None else httpx2.WriteError)(str(error)) from error


@contextmanager
def _reading():
    """What goes wrong reading an answer (its head or its body), as httpx names it."""
    try:
        yield
    except TimeoutError as error:
        raise httpx2.ReadTimeout(str(error)) from error
    except (OSError, http.client.HTTPException) as error:
        raise httpx2.RemoteProtocolError(str(error) or type(error).__name__) from error


def _answer(connection: http.client.HTTPConnection) -> http.client.HTTPResponse:
    with _reading():
        return connection.getresponse()


class _Body(httpx2.SyncByteStream):
    def __init__(self, pool: KeptAlive, origin: Origin, connection: http.client.HTTPConnection,
                 response: http.client.HTTPResponse):
        self.pool, self.origin, self.connection, self.response = pool, origin, connection, response
        self.whole = False

    def __iter__(self):
        with _reading():
            while chunk := self.response.read1(CHUNK):
                yield chunk
        if self.response.length:  # http.client ends a body cut short of its Content-Length quietly
            raise httpx2.RemoteProtocolError("the connection closed before the answer's end")
        self.response.close()  # read whole: the connection may carry the next request
        self.whole = True

    def close(self) -> None:
        connection, self.connection = self.connection, None
        if connection is None:
            return
        if self.whole and not self.response.will_close:
            self.pool.give_back(self.origin, connection)
        else:
            connection.close()


class _Network:
    """What httpx's `network_stream` extension offers that claude.py uses: the socket."""

    def __init__(self, connection: http.client.HTTPConnection):
        self.sock = connection.sock

    def get_extra_info(self, name: str):
        return self.sock if name == "socket" else None
