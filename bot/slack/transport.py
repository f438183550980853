"""Slack Web API calls over kept-alive connections.

slack-sdk's WebClient opens a new connection for every call (against slack.com, a TCP and a TLS
handshake each time: a round trip or two before the request even leaves, and the CPU of the
handshake), and so does its WebhookClient for every response_url. `PooledWebClient` and
`PooledWebhookClient` send exactly the same requests over the process's one pool of kept-alive
connections (bot/keepalive.py) instead, so a reply's calls reuse a few warm connections.

Invariants:
- Only the transport changes: slack-sdk still builds every request and reads every response, its
  retry handlers still decide what is retried.
- Failures reach slack-sdk as urllib's would (bot/slack/retries.py relies on them): a status ≥ 400 as
  `HTTPError` with its headers and body; a connection that cannot be made, or a request that cannot be
  sent, as `URLError`; one lost after the request was sent as what http.client raised
  (`RemoteDisconnected`, `ConnectionResetError`); a read timeout as `TimeoutError`.
- Nothing is retried here and no redirect followed (slack-sdk does its own retries); a pooled
  connection the server closed while idle is detected and replaced before it is reused.
- A client with a proxy set goes through urllib, as slack-sdk does.
"""
from __future__ import annotations

import http.client
import io
import urllib.request
from urllib.error import HTTPError, URLError

from slack_sdk import WebClient
from slack_sdk.webhook import WebhookClient, WebhookResponse

from ..tls import tls_context
from ..keepalive import KeptAlive

POOL_SIZE = 128  # idle connections kept per origin; a burst beyond it opens (and then closes) more


def connection_pool() -> KeptAlive:
    """One per process (a gunicorn worker builds its own after the fork)."""
    return KeptAlive(POOL_SIZE, tls_context())


class PooledWebClient(WebClient):
    def __init__(self, *args, pool: KeptAlive, **kwargs):
        super().__init__(*args, **kwargs)
        self.pool = pool

    def _perform_urllib_http_request_internal(self, url: str, req: urllib.request.Request) -> dict:
        if self.proxy is not None or not _web(url):
            return super()._perform_urllib_http_request_internal(url, req)
        status, headers, body = send(self.pool, url, req, self.timeout)
        return {"status": status, "headers": headers, "body": body}


class PooledWebhookClient(WebhookClient):
    """A response_url's client (an answer to a slash command, a button, a shortcut), on the same pool."""

    def __init__(self, *args, pool: KeptAlive, **kwargs):
        super().__init__(*args, **kwargs)
        self.pool = pool

    def _perform_http_request_internal(self, url: str, req: urllib.request.Request) -> WebhookResponse:
        if self.proxy is not None or not _web(url):
            return super()._perform_http_request_internal(url, req)
        status, headers, body = send(self.pool, url, req, self.timeout)
        return WebhookResponse(url=url, status_code=status, body=body, headers=headers)


def send(pool: KeptAlive, url: str, req: urllib.request.Request, timeout: float
         ) -> tuple[int, http.client.HTTPMessage, str]:
    """The request slack-sdk built, over the pool: (status, headers, decoded body), or urllib's errors."""
    connection, origin, target = pool.connection(url, timeout)
    try:
        try:  # as urllib: what goes wrong before the request is out is a URLError
            connection.request(req.get_method(), target, body=req.data, headers=dict(req.header_items()))
        except OSError as error:
            raise URLError(error) from error
        response = connection.getresponse()
        data = response.read()
    except BaseException:
        connection.close()
        raise
    if response.will_close:
        connection.close()
    else:
        pool.give_back(origin, connection)
    headers = response.headers
    if response.status >= 400:
        raise HTTPError(url, response.status, response.reason or "", headers, io.BytesIO(data))
    return response.status, headers, data.decode(headers.get_content_charset() or "utf-8")


def _web(url: str) -> bool:
    return url.lower().startswith(("http://", "https://"))
