"""The TLS context slack-sdk's clients are handed through their documented `ssl` option.

Python's default context: certificates verified against the system's authorities, or those SSL_CERT_FILE /
SSL_CERT_DIR name. Without one, slack-sdk's urllib path makes a new context for every call, loading the
authorities' bundle each time (~35 ms of CPU); one per process is made once. Socket Mode's connections and the
Anthropic SDK (httpx) make their own from the same settings.
"""
from __future__ import annotations

import ssl


def tls_context() -> ssl.SSLContext:
    return ssl.create_default_context()
