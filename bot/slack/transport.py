"""Slack Web API calls over kept-alive connections.

slack-sdk's WebClient opens a new connection for every call (against slack.com, a TCP and a TLS
handshake each time: a round trip or two before the request even leaves, and the CPU of the
handshake), and so does its WebhookClient for every response_url. `PooledWebClient` and
`PooledWebhookClient` send exactly the same requests through one urllib3 pool per process instead, so a
reply's dozen calls reuse a few warm connections.

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
from slack_sdk.webhook import WebhookClient, WebhookResponse
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
        if self.proxy is not None or not _web(url):
            return super()._perform_urllib_http_request_internal(url, req)
        status, headers, body = send(self.pool, url, req, self.timeout)
        return {"status": status, "headers": headers, "body": body}


class PooledWebhookClient(WebhookClient):
    """A response_url's client (an answer to a slash command, a button, a shortcut), on the same pool."""

    def __init__(self, *args, pool: urllib3.PoolManager, **kwargs):
        super().__init__(*args, **kwargs)
        self.pool = pool

    def _perform_http_request_internal(self, url: str, req: urllib.request.Request) -> WebhookResponse:
        if self.proxy is not None or not _web(url):
            return super()._perform_http_request_internal(url, req)
        status, headers, body = send(self.pool, url, req, self.timeout)
        return WebhookResponse(url=url, status_code=status, body=body, headers=headers)


def send(pool: urllib3.PoolManager, url: str, req: urllib.request.Request, timeout: float
         ) -> tuple[int, http.client.HTTPMessage, str]:
    """The request slack-sdk built, over the pool: (status, headers, decoded body), or urllib's errors."""
    try:
        response = pool.request(req.get_method(), url, body=req.data, headers=dict(req.header_items()),
                                timeout=timeout, redirect=False, retries=False)
    except Urllib3Error as error:
        raise _as_urllib(error) from error
    headers = _message(response.headers)
    if response.status >= 400:
        raise HTTPError(url, response.status, response.reason or "", headers, io.BytesIO(response.data))
    return response.status, headers, response.data.decode(headers.get_content_charset() or "utf-8")


def _web(url: str) -> bool:
    return url.lower().startswith(("http://", "https://"))


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
