"""Connectors' tokens sealed with THREADFORK_SECRET_KEY (Fernet: AES-128-CBC with an HMAC-SHA256, so a
sealed token can't be read or altered without the key). Only sealed tokens reach the store; a token
opens again only as a request is sent. Nothing here logs a token or puts one in an error.

Without a key, sealing is refused with a sentence saying what to set; a token sealed under another
key (the key was rotated) opens as None: the connector is then called without it, and its admins
type the token again.
"""
from __future__ import annotations

import logging

from cryptography.fernet import Fernet, InvalidToken

from ..domain.connectors import NO_KEY
from ..domain.errors import NoSecretKey

log = logging.getLogger(__name__)



class Vault:
    def __init__(self, key: str | None):
        self._fernet = Fernet(key.encode()) if key else None

    @property
    def ready(self) -> bool:
        return self._fernet is not None

    def seal(self, token: str) -> str:
        if self._fernet is None:
            raise NoSecretKey(NO_KEY)
        return self._fernet.encrypt(token.encode()).decode()

    def open(self, sealed: str) -> str | None:
        if self._fernet is None:
            log.warning("a connector's token is stored but THREADFORK_SECRET_KEY is not set: it is not sent")
            return None
        try:
            return self._fernet.decrypt(sealed.encode()).decode()
        except InvalidToken:
            log.warning("a connector's token was sealed under another THREADFORK_SECRET_KEY: it is not sent")
            return None


def check_key(key: str) -> str:
    """`key` if it is a Fernet key (32 url-safe base64 bytes), else ValueError."""
    try:
        Fernet(key.encode())
    except (ValueError, TypeError):
        raise ValueError("not a Fernet key: 32 url-safe base64-encoded bytes, as Fernet.generate_key() makes") \
            from None
    return key
