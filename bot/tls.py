"""One TLS context for every HTTPS client a process builds (the Anthropic SDK's, Slack file downloads):
making one loads the certificate authorities' bundle, ~30 ms of CPU, which each client would do again."""
from __future__ import annotations

import functools
import ssl

import httpx2


@functools.cache
def tls_context() -> ssl.SSLContext:
    """httpx's own default (certificates verified against its CA bundle), made once."""
    return httpx2.create_ssl_context()
