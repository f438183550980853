"""The fake Slack's wire: Web API calls (form or JSON bodies, the token as a Bearer header or a
`token` field, client credentials as HTTP Basic), bodies posted to response URLs, and file GETs.

Invariant: a dropped answer resets the connection (RST), as a dying front end does, instead of
closing it cleanly."""
from __future__ import annotations

import json
import socket
import struct
import time
from urllib.parse import parse_qsl, urlparse

from .http import QuietHandler
from .slack_oauth import basic_credentials

DROP = -1  # FakeSlack.handle()'s status for "reset the connection, answer nothing"


class SlackHandler(QuietHandler):
    def do_GET(self):
        self.arrived = time.monotonic()
        if self.path.startswith("/files-pri/"):
            auth = self.headers.get("Authorization", "")
            token = auth.removeprefix("Bearer ").strip() if auth.startswith("Bearer ") else None
            status, body, headers = self.server.fake.files.serve(self.server.fake.server.url + self.path, token)
            self.send(status, body, headers.pop("Content-Type"), headers)
            return
        self._dispatch(dict(parse_qsl(urlparse(self.path).query)))

    def do_POST(self):
        self.arrived = time.monotonic()  # the call reached "Slack"; parsing it is the fake's own cost
        raw = self.body()
        kind = self.headers.get("Content-Type", "")
        if self.path.startswith("/response/"):
            status, answer = self.server.fake.record_response(json.loads(raw or b"{}"))
            self.send(status, answer.encode(), "text/plain")
            return
        if "application/json" in kind:
            args = json.loads(raw or b"{}")
        else:
            args = dict(parse_qsl(raw.decode()))
            for key, opening in (("blocks", "["), ("attachments", "["), ("view", "{")):
                if isinstance(args.get(key), str) and args[key].startswith(opening):
                    args[key] = json.loads(args[key])
        args.update(dict(parse_qsl(urlparse(self.path).query)))
        self._dispatch(args)

    def _dispatch(self, args: dict) -> None:
        path = urlparse(self.path).path
        if not path.startswith("/api/"):
            self.send(404, b'{"ok":false,"error":"unknown_path"}')
            return
        auth = self.headers.get("Authorization", "")
        token = (auth.removeprefix("Bearer ").strip() if auth.startswith("Bearer ") else None) or args.pop("token", None)
        args.pop("token", None)
        self.server.fake.tokens.append(token)
        status, payload, headers = self.server.fake.handle(path[len("/api/"):], args, token, self.arrived,
                                                           basic_credentials(auth))
        if status == DROP:  # a reset (RST), not a clean close: what a dying front end does
            self.connection.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))
            self.connection.close()
            self.close_connection = True
            return
        self.send(status, json.dumps(payload).encode(), headers=headers)
