"""A certificate authority the tests create (trustme), and the server certificate every fake serves HTTPS
and WSS with: 127.0.0.1 and localhost, signed by that authority.

The bot is told to trust the authority only through the standard settings — SSL_CERT_FILE, which Python's
`ssl.create_default_context()` (slack-sdk's WebClient, WebhookClient and Socket Mode) and httpx (the
Anthropic SDK) both read — never by turning verification off. One authority per test process: making a key
pair costs ~50 ms of CPU.
"""
from __future__ import annotations

import functools
import ssl
from pathlib import Path

import trustme

HOSTS = ("127.0.0.1", "localhost")


@functools.cache
def authority() -> trustme.CA:
    return trustme.CA(organization_name="Threadfork tests")


@functools.cache
def server_context(host: str | None = None) -> ssl.SSLContext:
    """What a fake serves HTTPS with (TLS 1.2 and up, ALPN http/1.1, as Slack's and Anthropic's front ends): a
    certificate for 127.0.0.1 and localhost, and `host` (another loopback address) too."""
    context = ssl.create_default_context(ssl.Purpose.CLIENT_AUTH)
    authority().issue_cert(*HOSTS, *([host] if host else [])).configure_cert(context)
    context.set_alpn_protocols(["http/1.1"])
    return context


def client_context() -> ssl.SSLContext:
    """A client trusting the tests' authority alone, verifying as any client does (the tests' own requests)."""
    context = ssl.create_default_context()
    authority().configure_trust(context)
    return context


def write_authority(folder: Path) -> Path:
    """The authority's certificate as a PEM file, for SSL_CERT_FILE."""
    path = folder / "test-ca.pem"
    authority().cert_pem.write_to_path(str(path))
    return path
