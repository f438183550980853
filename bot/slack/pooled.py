"""Slack calls on kept-alive connections: slack-sdk's WebClient and WebhookClient over urllib3's pool.

slack-sdk opens a new connection for every call — against slack.com a TCP and a TLS handshake each time, two
round trips before the request leaves and ~2 ms of client CPU (docs/production.md) — and has no public hook
for another HTTP library. These subclasses replace one private method each, the one that sends a request
slack-sdk built; slack-sdk still builds every request, decides every retry (retries.py) and reads every
answer. pyproject.toml bounds slack-sdk above; tests/unit/test_slack_pool.py fails when the seam moves.

Invariants:
- An answer reaches slack-sdk as urllib's would: its headers as an email Message (urllib's type), a status
  ≥ 400 raised as urllib's HTTPError carrying them and the body (slack-sdk reads a 429's Retry-After there).
- urllib3 retries nothing and follows no redirect; its connection errors reach slack-sdk's retry handlers
  as urllib3 raises them (retries.py names them). urllib3 replaces a connection the server closed while idle.
- A client with a proxy (slack-sdk reads HTTPS_PROXY and the like itself) goes through slack-sdk's own urllib.
"""
from __future__ import annotations

import io
import ssl
import urllib.request
from email.message import Message
from urllib.error import HTTPError

import urllib3
from slack_sdk import WebClient
from slack_sdk.webhook import WebhookClient, WebhookResponse

POOL_SIZE = 128  # kept-alive connections per host; a burst beyond it opens (and then closes) more


def connection_pool(tls: ssl.SSLContext) -> urllib3.PoolManager:
    """One per process (a gunicorn worker builds its own after the fork)."""
    return urllib3.PoolManager(maxsize=POOL_SIZE, block=False, retries=False, ssl_context=tls)


class PooledWebClient(WebClient):
    def __init__(self, *args, pool: urllib3.PoolManager, **kwargs):
        super().__init__(*args, **kwargs)
        self.pool = pool

    def _perform_urllib_http_request_internal(self, url: str, req: urllib.request.Request) -> dict:
        if self.proxy:
            return super()._perform_urllib_http_request_internal(url, req)
        status, headers, body = send(self.pool, url, req, self.timeout)
        return {"status": status, "headers": headers, "body": body}


class PooledWebhookClient(WebhookClient):
    """A response_url's client (an answer to a slash command, a button, a shortcut), on the same pool."""

    def __init__(self, *args, pool: urllib3.PoolManager, **kwargs):
        super().__init__(*args, **kwargs)
        self.pool = pool

    def _perform_http_request_internal(self, url: str, req: urllib.request.Request) -> WebhookResponse:
        if self.proxy:
            return super()._perform_http_request_internal(url, req)
        status, headers, body = send(self.pool, url, req, self.timeout)
        return WebhookResponse(url=url, status_code=status, body=body, headers=headers)


def send(pool: urllib3.PoolManager, url: str, req: urllib.request.Request, timeout: float
         ) -> tuple[int, Message, str]:
    """The request slack-sdk built, over the pool: (status, headers, decoded body), or HTTPError for ≥ 400."""
    response = pool.request(req.get_method(), url, body=req.data, headers=dict(req.header_items()),
                            timeout=timeout, redirect=False, retries=False)
    headers = Message()
    for name, value in response.headers.items():
        headers[name] = value
    if response.status >= 400:
        raise HTTPError(url, response.status, response.reason or "", headers, io.BytesIO(response.data))
    return response.status, headers, response.data.decode(headers.get_content_charset() or "utf-8")
