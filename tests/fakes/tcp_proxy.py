"""A loopback TCP proxy a test can cut: the database "goes away" (every connection through it drops,
new ones are refused) and comes back, while the real server behind it keeps running."""
from __future__ import annotations

import select
import socket
import threading


class TcpProxy:
    def __init__(self, target_host: str, target_port: int):
        self.target = (target_host, target_port)
        self.listener = socket.create_server(("127.0.0.1", 0))
        self.port = self.listener.getsockname()[1]
        self._pairs: list[tuple[socket.socket, socket.socket]] = []
        self._lock = threading.Lock()
        self.is_cut = False
        self._stopping = False
        threading.Thread(target=self._accept, daemon=True).start()

    def cut(self) -> None:
        """Drop every connection and refuse new ones, as a network partition or a dead server would."""
        with self._lock:
            self.is_cut = True
            pairs, self._pairs = self._pairs, []
        for pair in pairs:
            _close(*pair)

    def restore(self) -> None:
        with self._lock:
            self.is_cut = False

    def stop(self) -> None:
        self._stopping = True
        self.cut()
        self.listener.close()

    def _accept(self) -> None:
        while not self._stopping:
            try:
                client, _ = self.listener.accept()
            except OSError:
                return
            with self._lock:
                refused = self.is_cut
            if refused:
                _close(client)
                continue
            try:
                upstream = socket.create_connection(self.target, timeout=5)
            except OSError:
                _close(client)
                continue
            with self._lock:
                self._pairs.append((client, upstream))
            threading.Thread(target=self._pump, args=(client, upstream), daemon=True).start()

    def _pump(self, client: socket.socket, upstream: socket.socket) -> None:
        sockets = [client, upstream]
        try:
            while True:
                readable, _, _ = select.select(sockets, [], [], 1.0)
                for source in readable:
                    data = source.recv(65536)
                    if not data:
                        return
                    (upstream if source is client else client).sendall(data)
        except (OSError, ValueError):
            return
        finally:
            _close(client, upstream)
            with self._lock:
                if (client, upstream) in self._pairs:
                    self._pairs.remove((client, upstream))


def _close(*sockets: socket.socket) -> None:
    for sock in sockets:
        try:
            sock.shutdown(socket.SHUT_RDWR)
        except OSError:
            pass
        sock.close()
