"""The configured models, looked up once at start with the Models API (`client.models.retrieve`, free).

A model Anthropic does not know (404 `not_found_error`), or a key it refuses, is a bad setting: the bot says
"Threadfork cannot start: …" naming it, before serving anything (bot/__main__.py exits 2). An API that cannot
be reached or answers 5xx proves nothing about the settings: start goes on, and the first answer says what
went wrong. Never a secret in the message.
"""
from __future__ import annotations

import logging
from collections.abc import Iterable

import anthropic

log = logging.getLogger(__name__)

TIMEOUT = 10.0


class UnknownModels(Exception):
    """A configured model (or the key) Anthropic refuses; the message names it."""


def check_models(api_key: str, base_url: str | None, models: Iterable[str]) -> None:
    """Raises UnknownModels naming every configured model Anthropic does not know."""
    http = logging.getLogger("httpx2")
    level = http.level
    http.setLevel(max(logging.WARNING, level))  # its per-request INFO line is not the bot's to log
    try:
        _check(api_key, base_url, models)
    finally:
        http.setLevel(level)


def _check(api_key: str, base_url: str | None, models: Iterable[str]) -> None:
    client = anthropic.Anthropic(api_key=api_key, base_url=base_url, timeout=TIMEOUT, max_retries=1)
    unknown = []
    for model in dict.fromkeys(models):
        try:
            client.models.retrieve(model)
        except anthropic.NotFoundError:
            unknown.append(model)
        except (anthropic.AuthenticationError, anthropic.PermissionDeniedError) as error:
            raise UnknownModels(f"Anthropic refused ANTHROPIC_API_KEY ({error.status_code}) when asked about the "
                                f"model {model}") from None
        except (anthropic.APIStatusError, anthropic.APIConnectionError) as error:
            log.warning("could not check the model %s with Anthropic's Models API (%s); starting anyway", model,
                        getattr(error, "status_code", None) or type(error).__name__)
            return
    if unknown:
        names = ", ".join(unknown)
        raise UnknownModels(f"Anthropic's API does not know the model{'s' if len(unknown) > 1 else ''} {names} "
                            "(404 not_found_error): check THREADFORK_MODEL and THREADFORK_MODELS")
    client.close()
