"""How Slack Web API calls are retried: slack-sdk's retry handlers, tuned for what a reply needs.

- Connection errors (urllib's and, on the kept-alive connections of pooled.py, urllib3's: a connection not
  made, or lost before an answer) and 5xx are retried with exponential backoff and jitter, `ratelimited` (429)
  after `Retry-After` — except as below.
- chat.appendStream is never repeated after a 5xx or a lost connection: Slack may have applied it
  before failing, and a second append would show the same words twice. The reply rewrites the
  message with chat.update instead (reply.py), which is the same whether or not the append landed.
- chat.startStream (Tier 2, about 20 a minute per workspace) does not wait out `Retry-After`: the
  reply posts and updates a message at once instead.
What is left over reaches the caller as one of FAILURES, named in logs by failure_code().
"""
from __future__ import annotations

from http import client as http_errors  # its exception types only: see FAILURES
from urllib.parse import urlparse

from slack_sdk.errors import SlackApiError, SlackClientError
from slack_sdk.http_retry import RetryHandler
from slack_sdk.http_retry.builtin_handlers import (
    ConnectionErrorRetryHandler,
    RateLimitErrorRetryHandler,
    ServerErrorRetryHandler,
)
from slack_sdk.http_retry.request import HttpRequest
from urllib3.exceptions import ConnectTimeoutError, NewConnectionError, ProtocolError
from urllib3.exceptions import HTTPError as Urllib3Error

from ..infrastructure import metrics

NOT_REPEATED = frozenset({"chat.appendStream"})
NOT_WAITED = frozenset({"chat.startStream"})
SERVER_ERRORS = frozenset({500, 502, 503, 504})
# refused, 5xx, or no answer at all: urllib3's errors, and through a proxy (slack-sdk's urllib) the standard
# library's, which it lets out unwrapped (a lost connection an OSError, a broken answer an HTTPException)
FAILURES = (SlackClientError, OSError, Urllib3Error, http_errors.HTTPException)
# slack-sdk's own list (urllib's URLError, ConnectionResetError, RemoteDisconnected) and urllib3's equivalents
CONNECTION_ERRORS = [*ConnectionErrorRetryHandler().error_types_to_do_retries,
                     NewConnectionError, ConnectTimeoutError, ProtocolError]


def failure_code(error: BaseException) -> str:
    """Slack's error code, else the HTTP status, else the kind of connection failure (never a token)."""
    if isinstance(error, SlackApiError):
        status = error.response.status_code
        return f"http_{status}" if status >= 500 else str(error.response.get("error") or f"http_{status}")[:100]
    return type(error).__name__


def retry_after(error: BaseException, default: float = 60.0) -> float:
    """Seconds a `ratelimited` answer asks to wait."""
    headers = error.response.headers if isinstance(error, SlackApiError) else {}
    value = next((v for k, v in (headers or {}).items() if k.lower() == "retry-after"), None)
    value = value[0] if isinstance(value, list) else value
    try:
        return float(value)
    except (TypeError, ValueError):
        return default


def method_of(request: HttpRequest) -> str:
    """`chat.update` for https://slack.com/api/chat.update (a response_url gives its last segment)."""
    return urlparse(request.url).path.rsplit("/", 1)[-1]


# each handler asks first what the library asks (cheap: a status, an error's type), the method only then: every
# successful call passes through every handler


class ConnectionErrors(ConnectionErrorRetryHandler):
    def _can_retry(self, *, state, request, response=None, error=None) -> bool:
        return super()._can_retry(state=state, request=request, response=response, error=error) \
            and method_of(request) not in NOT_REPEATED


class ServerErrors(ServerErrorRetryHandler):
    def _can_retry(self, *, state, request, response=None, error=None) -> bool:
        return (response is not None and response.status_code in SERVER_ERRORS
                and method_of(request) not in NOT_REPEATED)


class RateLimits(RateLimitErrorRetryHandler):
    def _can_retry(self, *, state, request, response=None, error=None) -> bool:
        metrics.ratelimited(request, response)
        return super()._can_retry(state=state, request=request, response=response, error=error) \
            and method_of(request) not in NOT_WAITED


def retry_handlers() -> list[RetryHandler]:
    """For every WebClient and response_url WebhookClient the bot builds."""
    return [ConnectionErrors(max_retry_count=2, error_types=CONNECTION_ERRORS), ServerErrors(max_retry_count=2), RateLimits(max_retry_count=3)]
