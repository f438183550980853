"""Downloading shared files from Slack: `url_private_download` with the bot token of the file's
workspace (SharedFile.team_id, see clients.py) — and only from
Slack's own hosts (SLACK_API_URL's host and its subdomains, e.g. files.slack.com), redirects
included, so the token never reaches anyone else. Slack refusing shows as a 4xx, or as a 200 with an
HTML login page instead of the file: both are refusals."""
from __future__ import annotations

import logging
from urllib.parse import urljoin, urlsplit

import httpx2

from ..domain.errors import ChatUnavailable
from ..services.ports import SharedFile
from .clients import Clients

log = logging.getLogger(__name__)

MAX_REDIRECTS = 3
REFUSED = "Slack would not give me the file"


class Downloads:
    def __init__(self, clients: Clients, api_url: str, max_bytes: int, timeout: float = 60.0):
        self.clients = clients
        self.home = (urlsplit(api_url).hostname or "").lower()
        self.max_bytes = max_bytes
        self.client = httpx2.Client(follow_redirects=False, timeout=timeout)

    def __call__(self, file: SharedFile) -> bytes:
        token = self.clients.for_team(file.team_id).token  # ChatUnavailable when the team has no installation
        url = file.url
        for _ in range(MAX_REDIRECTS + 1):
            if not url or not self._slacks(url):
                log.warning("file %s: not downloading from outside Slack", file.id)
                raise ChatUnavailable(REFUSED)
            try:
                with self.client.stream("GET", url, headers={"Authorization": f"Bearer {token}"}) as response:
                    if response.is_redirect:
                        url = urljoin(url, response.headers.get("location", ""))
                        continue
                    return self._body(file, response)
            except httpx2.HTTPError as error:
                log.warning("file %s: download failed (%s)", file.id, type(error).__name__)
                raise ChatUnavailable(REFUSED) from None
        raise ChatUnavailable(REFUSED)

    def _body(self, file: SharedFile, response) -> bytes:
        kind = response.headers.get("content-type", "").split(";")[0].strip().lower()
        if response.status_code != 200 or (kind == "text/html" and not file.mimetype.startswith("text/html")):
            log.warning("file %s: Slack answered %s (%s)", file.id, response.status_code, kind or "no type")
            raise ChatUnavailable(REFUSED)
        data = bytearray()
        for piece in response.iter_bytes():
            data += piece
            if len(data) > self.max_bytes:
                raise ChatUnavailable(f"the file is larger than {self.max_bytes:,} bytes")
        return bytes(data)

    def _slacks(self, url: str) -> bool:
        host = (urlsplit(url).hostname or "").lower()
        return bool(self.home) and (host == self.home or host.endswith("." + self.home))
