"""Slack Web API calls over kept-alive connections.

slack-sdk's WebClient opens a new connection for every call (against slack.com, a TCP and a TLS
handshake each time: a round trip or two before the request even leaves, and the CPU of the
handshake). `PooledWebClient` sends exactly the same requests through one urllib3 pool per process
instead, so a reply's dozen calls reuse a few warm connections.

Invariants:
- Only the transport changes: slack-sdk still builds every request and reads every response, its
  retry handlers still decide what is retried.
- Failures reach slack-sdk as urllib's would (bot/slack/retries.py relies on them): a status ≥ 400 as
  `HTTPError` with its headers and body; a connection that cannot be made as `URLError`; one lost
  after the request was sent as what http.client raised (`RemoteDisconnected`, `ConnectionResetError`);
  a read timeout as `TimeoutError`.
- urllib3 retries nothing and follows no redirect (slack-sdk does its own retries); a pooled
  connection the server closed while idle is detected and replaced before it is reused.
- A client with a proxy set goes through urllib, as slack-sdk does.
"""
from __future__ import annotations

import http.client
import io
import urllib.request
from urllib.error import HTTPError, URLError

import urllib3
from slack_sdk import WebClient
from urllib3.exceptions import HTTPError as Urllib3Error
from urllib3.exceptions import ProtocolError, ReadTimeoutError

POOL_SIZE = 32  # kept-alive connections per host; a burst beyond it opens (and then closes) more


def connection_pool() -> urllib3.PoolManager:
    """One per process (a gunicorn worker builds its own after the fork)."""
    return urllib3.PoolManager(maxsize=POOL_SIZE, block=False, retries=False)


class PooledWebClient(WebClient):
    def __init__(self, *args, pool: urllib3.PoolManager, **kwargs):
        super().__init__(*args, **kwargs)
        self.pool = pool

    def _perform_urllib_http_request_internal(self, url: str, req: urllib.request.Request) -> dict:
        if self.proxy is not None or not url.lower().startswith(("http://", "https://")):
            return super()._perform_urllib_http_request_internal(url, req)
        try:
            response = self.pool.request(req.get_method(), url, body=req.data, headers=dict(req.header_items()),
                                         timeout=self.timeout, redirect=False, retries=False)
        except Urllib3Error as error:
            raise _as_urllib(error) from error
        headers = _message(response.headers)
        if response.status >= 400:
            raise HTTPError(url, response.status, response.reason or "", headers, io.BytesIO(response.data))
        charset = headers.get_content_charset() or "utf-8"
        return {"status": response.status, "headers": headers, "body": response.data.decode(charset)}


def _message(headers) -> http.client.HTTPMessage:
    """Response headers as urllib hands them over (slack-sdk reads their charset and Retry-After)."""
    message = http.client.HTTPMessage()
    for name, value in headers.items():
        message[name] = value
    return message


def _as_urllib(error: Urllib3Error) -> Exception:
    if isinstance(error, ReadTimeoutError):
        return TimeoutError(str(error))
    lost = error.args[-1] if isinstance(error, ProtocolError) and error.args else None
    if isinstance(lost, (OSError, http.client.HTTPException)):  # sent, and the connection went
        return lost
    return URLError(error.__context__ or error)  # never connected (or anything else)
