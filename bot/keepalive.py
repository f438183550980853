"""Kept-alive HTTP/1.1 connections on http.client: the transport of Slack's Web API (slack/transport.py)
and of Claude's API (llm/transport.py), a pool for each per process.

Written by hand because a call is the bot's most frequent work: on the bench's machine one Slack call's
client CPU (slack-sdk building the request and reading the answer included) was 0.6–0.75 ms through
urllib3's pool and 0.27–0.44 ms through this one, in one run; http.client alone makes a call in 0.11–0.17 ms.

Invariants:
- A connection serves one request at a time; idle ones wait per origin (scheme, host, port), the most
  recently used first, at most `size` per origin; one more is closed once its answer is read.
- An idle connection the server closed (or that has anything unexpected to read) is dropped, never reused:
  a request is never sent down a connection known to be dead.
- The answer is read whole before the connection goes back, so nothing of it can reach the next request;
  an answer that says it closes the connection closes it.
- Errors are those of http.client and the socket, unchanged; a connection that failed in any way is closed.
- Answers are http.client's, their headers read by responses.py.
"""
from __future__ import annotations

import http.client
import select
import ssl
import threading
from urllib.parse import urlsplit

from .responses import Response

Origin = tuple[str, str, int]


SocketOption = tuple[int, int, int]


class KeptAlive:
    def __init__(self, size: int, tls: ssl.SSLContext | None = None, socket_options: tuple[SocketOption, ...] = ()):
        """`socket_options`: setsockopt arguments for every new connection (TCP keep-alive probes, say)."""
        self.size = size
        self.tls = tls
        self.socket_options = socket_options
        self._idle: dict[Origin, list[http.client.HTTPConnection]] = {}
        self._lock = threading.Lock()

    def connection(self, url: str, timeout: float) -> tuple[http.client.HTTPConnection, Origin, str]:
        """A live connection to the URL's origin (an idle one, else a new, unconnected one), its origin and the
        request target (path and query)."""
        parts = urlsplit(url)
        scheme, host = parts.scheme.lower(), parts.hostname or ""
        origin = (scheme, host, parts.port or (443 if scheme == "https" else 80))
        target = (parts.path or "/") + (f"?{parts.query}" if parts.query else "")
        connection = self._take(origin)
        if connection is None:
            connection = self._new(origin, timeout)
        elif connection.sock is not None:
            connection.sock.settimeout(timeout)
        connection.timeout = timeout
        return connection, origin, target

    def give_back(self, origin: Origin, connection: http.client.HTTPConnection) -> None:
        with self._lock:
            idle = self._idle.setdefault(origin, [])
            if len(idle) < self.size:
                idle.append(connection)
                return
        connection.close()

    def _take(self, origin: Origin) -> http.client.HTTPConnection | None:
        while True:
            with self._lock:
                idle = self._idle.get(origin)
                if not idle:
                    return None
                connection = idle.pop()
            if _alive(connection):
                return connection
            connection.close()

    def _new(self, origin: Origin, timeout: float) -> http.client.HTTPConnection:
        scheme, host, port = origin
        if scheme == "https":
            connection = _Tls(host, port, timeout=timeout, context=self.tls)
        else:
            connection = _Plain(host, port, timeout=timeout)
        connection.socket_options = self.socket_options
        return connection


class _WithOptions:
    socket_options: tuple[SocketOption, ...] = ()
    response_class = Response  # headers read without the email parser (responses.py)

    def connect(self) -> None:
        super().connect()  # type: ignore[misc]
        for option in self.socket_options:
            self.sock.setsockopt(*option)  # type: ignore[attr-defined]


class _Plain(_WithOptions, http.client.HTTPConnection):
    pass


class _Tls(_WithOptions, http.client.HTTPSConnection):
    pass


def _alive(connection: http.client.HTTPConnection) -> bool:
    """Connected, and with nothing to read: a server that hung up makes its socket readable (EOF)."""
    sock = connection.sock
    if sock is None:
        return False
    poll = select.poll()
    poll.register(sock, select.POLLIN)
    return not poll.poll(0)
