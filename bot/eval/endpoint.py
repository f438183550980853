"""What the eval needs from the environment, and one free call to check it before any paid one.

Settings are read like the bot's (environment first, then `.env`), but only the Anthropic ones:
the eval needs no Slack token and no database. Before any turn is played, GET /v1/models/{model}
(free) proves the key is accepted and the model exists, and tells a fake from the real API: the
test suite's fake Anthropic server answers with a FAKE_HEADER header, which no real endpoint sends.
Against a fake the run is `offline` and its accuracy means nothing.
"""
from __future__ import annotations

from dataclasses import dataclass

import anthropic
from pydantic import SecretStr
from pydantic_settings import BaseSettings, SettingsConfigDict

from ..config import Seconds, Settings

FAKE_HEADER = "x-threadfork-fake"


class Refused(Exception):
    """The eval cannot run; the message says why and what to do, and holds no secret."""


class EvalSettings(BaseSettings):
    model_config = SettingsConfigDict(env_file=".env", env_file_encoding="utf-8", extra="ignore",
                                      case_sensitive=False)

    anthropic_api_key: SecretStr | None = None
    anthropic_base_url: str | None = None
    # the bot's defaults, from the one place they are stated
    threadfork_model: str = Settings.model_fields["threadfork_model"].default
    threadfork_max_tokens: int = Settings.model_fields["threadfork_max_tokens"].default
    threadfork_model_timeout: Seconds = Settings.model_fields["threadfork_model_timeout"].default


@dataclass(frozen=True)
class Endpoint:
    url: str
    offline: bool  # a fake Anthropic API answered


def api_key(settings: EvalSettings) -> str:
    key = settings.anthropic_api_key.get_secret_value().strip() if settings.anthropic_api_key else ""
    if not key:
        raise Refused("The recall eval talks to Claude's API with your key, and ANTHROPIC_API_KEY is not set "
                      "(in the environment or in .env). Nothing was run.")
    return key


def check(settings: EvalSettings, model: str) -> Endpoint:
    client = anthropic.Anthropic(api_key=api_key(settings), base_url=settings.anthropic_base_url, timeout=30,
                                 max_retries=2)
    where = str(client.base_url).rstrip("/")
    try:
        response = client.models.with_raw_response.retrieve(model)
    except anthropic.AuthenticationError:
        raise Refused(f"{where} refused ANTHROPIC_API_KEY (401): check the key. Nothing was run.") from None
    except anthropic.PermissionDeniedError:
        raise Refused(f"{where} says this key may not use the API (403). Nothing was run.") from None
    except anthropic.NotFoundError:
        raise Refused(f"{where} does not know the model {model!r}: pass another with --model. "
                      "Nothing was run.") from None
    except anthropic.APIStatusError as error:
        raise Refused(f"{where} answered {error.status_code} when asked about {model!r}. Nothing was run.") from None
    except anthropic.APIConnectionError:
        raise Refused(f"{where} could not be reached (ANTHROPIC_BASE_URL?). Nothing was run.") from None
    return Endpoint(where, response.headers.get(FAKE_HEADER) is not None)
