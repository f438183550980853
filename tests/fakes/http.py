"""A threaded HTTP server on 127.0.0.1 that runs in the background of a test, over plain http or, with
`tls`, over HTTPS with the tests' certificate authority (tls.py)."""
from __future__ import annotations

import socket
import ssl
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

from .tls import server_context


class _Server(ThreadingHTTPServer):
    request_queue_size = 512  # socketserver's default backlog of 5 stalls hundreds of concurrent clients

    def __init__(self, *args, tls: ssl.SSLContext | None = None):
        super().__init__(*args)
        self.tls = tls
        self.opened = 0  # connections accepted so far (a client keeping them alive opens few)
        self.open_sockets: set = set()
        self._sockets_lock = threading.Lock()

    def process_request(self, request, client_address):
        with self._sockets_lock:
            self.opened += 1
            self.open_sockets.add(request)
        super().process_request(request, client_address)

    def get_request(self):
        sock, address = super().get_request()
        if self.tls is not None:  # the handshake happens on the request's own thread (finish_request)
            sock = self.tls.wrap_socket(sock, server_side=True, do_handshake_on_connect=False)
        return sock, address

    def finish_request(self, request, client_address):
        if self.tls is not None:
            try:
                request.do_handshake()
            except (OSError, ValueError):  # a client that does not trust the certificate hangs up
                return
        super().finish_request(request, client_address)

    def shutdown_request(self, request):
        with self._sockets_lock:
            self.open_sockets.discard(request)
        super().shutdown_request(request)


# serve_forever notices shutdown() only between polls: socketserver's 0.5 s made every fixture's
# teardown wait up to half a second per server; 10 ms costs an idle server ~0.2 % of a core
POLL_SECONDS = 0.01


class BackgroundServer:
    def __init__(self, handler: type[BaseHTTPRequestHandler], tls: bool = False):
        self.httpd = _Server(("127.0.0.1", 0), handler, tls=server_context() if tls else None)
        self.httpd.daemon_threads = True
        self.httpd.fake = self  # handlers reach their fake through self.server.fake
        self.thread = threading.Thread(target=self.httpd.serve_forever, args=(POLL_SECONDS,), daemon=True)

    @property
    def url(self) -> str:
        scheme = "https" if self.httpd.tls is not None else "http"
        return f"{scheme}://127.0.0.1:{self.httpd.server_address[1]}"

    def start(self):
        self.thread.start()
        return self

    def stop(self) -> None:
        self.httpd.shutdown()
        self.httpd.server_close()

    @property
    def connections_opened(self) -> int:
        return self.httpd.opened

    def hang_up(self) -> None:
        """Close every open connection, as a front end does with idle kept-alive ones."""
        with self.httpd._sockets_lock:
            sockets = list(self.httpd.open_sockets)
        for sock in sockets:
            try:
                sock.shutdown(socket.SHUT_RDWR)
            except OSError:
                pass


class QuietHandler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    # like real API front ends: without TCP_NODELAY each small write after the first (an SSE event,
    # a body after its headers) can wait for the client's delayed ACK
    disable_nagle_algorithm = True

    def log_message(self, *args) -> None:  # keep test output readable
        pass

    def body(self) -> bytes:
        length = int(self.headers.get("Content-Length") or 0)
        return self.rfile.read(length) if length else b""

    def send(self, status: int, payload: bytes, content_type: str = "application/json", headers=None) -> None:
        self.send_response(status)
        self.send_header("Content-Type", content_type)
        self.send_header("Content-Length", str(len(payload)))
        for key, value in (headers or {}).items():
            self.send_header(key, value)
        self.end_headers()
        self.wfile.write(payload)
