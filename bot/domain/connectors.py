"""Remote MCP connectors a channel lets Claude use (the Messages API's MCP connector calls them).

A connector is a name, an `https://` URL of a publicly reachable server, and optionally the tools
allowed (None: all of them). Its token is never part of it: tokens are secrets, kept sealed by the
store and handed to a request only as it is sent, and bound to the URL it was given for: it stays only
while the connector's name and its URL's scheme, host, port and path are unchanged (`where`).

Checks here are pure (no DNS). A URL's host is read as a resolver would read it before it is judged:
percent-escapes and IDNA dots undone, trailing dots dropped, IPv4 in every form `inet_aton` accepts
(`127.1`, `0x7f.0.0.1`, `0177.0.0.1`, `2130706433`), and an IPv6 address by the IPv4 address it embeds
(mapped, compatible, NAT64, 6to4, Teredo). A host in a private, loopback, link-local or reserved range,
or a name only a local network knows (`localhost`, `*.local`, `*.internal`, a name without a dot), is
refused.
"""
from __future__ import annotations

import ipaddress
import json
import re
import socket
from dataclasses import dataclass
from urllib.parse import unquote, urlsplit

MAX_CONNECTORS = 10
NAME = re.compile(r"[A-Za-z0-9_-]{1,64}")
TOOL = re.compile(r"[A-Za-z0-9_.-]{1,128}")
URL_LIMIT = 2_000
TOKEN_LIMIT = 4_000
NO_KEY = "Nothing was saved: keeping a token needs THREADFORK_SECRET_KEY set to a Fernet key (README, “Connectors”)."
LOCAL_SUFFIXES = (".localhost", ".local", ".internal", ".lan", ".home.arpa", ".intranet", ".corp")
_IPV4_FORMS = re.compile(r"[0-9a-fA-FxX.]+")  # what inet_aton may read as an address (hex, octal, short)
_NAT64 = (ipaddress.ip_network("64:ff9b::/96"), ipaddress.ip_network("64:ff9b:1::/48"))
_COMPATIBLE = ipaddress.ip_network("::/96")  # deprecated IPv4-compatible addresses (::a.b.c.d)


@dataclass(frozen=True)
class Connector:
    name: str
    url: str
    allowed_tools: tuple[str, ...] | None = None  # None: every tool the server offers

    def as_json(self) -> dict:
        return {"name": self.name, "url": self.url, "allowed_tools": list(self.allowed_tools)
                if self.allowed_tools is not None else None}


def from_json(value) -> Connector:
    tools = value.get("allowed_tools")
    return Connector(value["name"], value["url"], tuple(tools) if tools is not None else None)


def dumps(connectors: tuple[Connector, ...]) -> str:
    """A list of connectors as stored with a fork (its snapshot): no token ever."""
    return json.dumps([c.as_json() for c in connectors], separators=(",", ":"))


def loads(text: str | None) -> tuple[Connector, ...]:
    return tuple(from_json(v) for v in json.loads(text)) if text else ()


def check_name(name: str) -> str | None:
    if not NAME.fullmatch(name):
        return "Use letters, digits, - and _ only (at most 64), like `tracker`."
    return None


def check_url(url: str) -> str | None:
    """Why `url` can't be a connector's, or None."""
    if len(url) > URL_LIMIT:
        return f"Keep the URL under {URL_LIMIT:,} characters."
    if any(ord(c) < 32 or ord(c) == 127 for c in url):
        return "The URL holds a control character: type it again, like https://mcp.example.com/mcp."
    try:
        parts = urlsplit(url)
        host = host_of(url)
        parts.port  # noqa: B018 — raises on a malformed port
    except ValueError:
        return "That is not a URL, like https://mcp.example.com/mcp."
    if parts.scheme.lower() != "https":
        return "The URL must start with https:// — the API calls only servers over HTTPS."
    if not host:
        return "That URL has no host, like https://mcp.example.com/mcp."
    if parts.username or parts.password:
        return "Put the credentials in the token field, not in the URL."
    if _private(host):
        return "That host is private or local: the API calls the server from the internet, so it must be public."
    return None


def host_of(url: str) -> str:
    """The host `url` names, as a resolver reads it: unescaped, IDNA-mapped, lower case, no trailing dot
    (raises ValueError for one no resolver could read)."""
    host = unquote(urlsplit(url).hostname or "")
    if not host.isascii():
        try:
            host = host.encode("idna").decode("ascii")
        except UnicodeError as error:
            raise ValueError("not a host name") from error
    return host.lower().rstrip(".")


def where(url: str) -> tuple[str, str, int | None, str] | None:
    """Where a token sent with `url` goes: scheme, host, port (443 when none) and path; None for no URL."""
    try:
        parts = urlsplit(url.strip())
        return parts.scheme.lower(), host_of(url.strip()), parts.port or 443, parts.path or "/"
    except ValueError:
        return None


def _private(host: str) -> bool:
    address = _address(host)
    if address is None:
        return host == "localhost" or host.endswith(LOCAL_SUFFIXES) or "." not in host
    return not address.is_global or any(not v4.is_global for v4 in _embedded(address))


def _address(host: str) -> ipaddress.IPv4Address | ipaddress.IPv6Address | None:
    try:
        return ipaddress.ip_address(host)
    except ValueError:
        pass
    if not _IPV4_FORMS.fullmatch(host):
        return None
    try:  # the forms the C library's resolver accepts too
        return ipaddress.IPv4Address(socket.inet_aton(host))
    except OSError:
        return None


def _embedded(address) -> list[ipaddress.IPv4Address]:
    """The IPv4 addresses an IPv6 address carries (traffic to it may reach them)."""
    if address.version == 4:
        return []
    found = [a for a in (address.ipv4_mapped, address.sixtofour, *(address.teredo or ())) if a is not None]
    if address in _COMPATIBLE or any(address in net for net in _NAT64):
        found.append(ipaddress.IPv4Address(int(address) & 0xFFFFFFFF))
    return found


def parse_tools(text: str) -> tuple[str, ...] | None:
    """The allowed tools as typed: a comma list; empty means every tool."""
    names = [n.strip() for n in text.replace("\n", ",").split(",") if n.strip()]
    for name in names:
        if not TOOL.fullmatch(name):
            raise ValueError(f"“{name[:40]}” is not a tool name: use letters, digits, ., - and _ only.")
    return tuple(dict.fromkeys(names)) or None


@dataclass(frozen=True)
class ConnectorRow:
    """One connector's inputs as submitted in the settings modal (slot `index`)."""

    index: int
    name: str
    url: str
    token: str  # "" : keep the one set (if any)
    tools: str
    was: Connector | None  # the connector this slot showed, if any


@dataclass(frozen=True)
class ConnectorForm:
    """What the connectors section of a submitted modal asks for."""

    connectors: tuple[Connector, ...]
    new_tokens: dict[str, str]  # by connector name: tokens typed now
    kept_from: dict[str, str]  # by connector name: the shown connector whose token it keeps
    moved: tuple[tuple[str, Connector], ...] = ()  # (name, the connector its slot showed): renamed or sent
    # elsewhere without a new token, so no token is kept for it


def read_connectors(rows: list[ConnectorRow], block) -> tuple[ConnectorForm, dict[str, str]]:
    """The connectors `rows` ask for, and what they got wrong keyed by `block(index, field)` (an
    empty slot — no name, no URL — is a removed connector, or an unused one)."""
    errors: dict[str, str] = {}
    connectors, new_tokens, kept, moved = [], {}, {}, []
    seen: set[str] = set()
    for row in rows:
        name, url = row.name.strip(), row.url.strip()
        if not name and not url:
            continue
        if not name:
            errors[block(row.index, "name")] = "Give the connector a name, like `tracker`."
            continue
        problem = check_name(name) or (f"Two connectors are named “{name}”: names must be unique here."
                                       if name in seen else None)
        if problem:
            errors[block(row.index, "name")] = problem
        seen.add(name)
        problem = check_url(url) if url else "Enter the server's URL, like https://mcp.example.com/mcp."
        if problem:
            errors[block(row.index, "url")] = problem
        if len(row.token) > TOKEN_LIMIT:
            errors[block(row.index, "token")] = f"Keep the token under {TOKEN_LIMIT:,} characters."
        elif any(ord(c) < 32 or ord(c) == 127 for c in row.token.strip()):
            errors[block(row.index, "token")] = "The token holds a control character: paste it again."
        try:
            tools = parse_tools(row.tools)
        except ValueError as error:
            errors[block(row.index, "tools")] = str(error)
            tools = None
        connectors.append(Connector(name, url, tools))
        if row.token.strip():
            new_tokens[name] = row.token.strip()
        elif row.was and row.was.name == name and where(row.was.url) == where(url):
            kept[name] = row.was.name
        elif row.was:
            moved.append((name, row.was))
        if len(connectors) > MAX_CONNECTORS:
            errors[block(row.index, "name")] = f"A channel may have at most {MAX_CONNECTORS} connectors."
    return ConnectorForm(tuple(connectors), new_tokens, kept, tuple(moved)), errors


FIELDS = ("name", "url", "token", "tools")
_BLOCK = re.compile(r"connector_(\d+)_(name|url|token|tools)")


def block_id(index: int, field: str) -> str:
    """The settings modal's block_id of one connector input: `connector_0_url`."""
    return f"connector_{index}_{field}"


def submitted_rows(values: dict, shown: tuple[Connector, ...]) -> list[ConnectorRow] | None:
    """The connector slots a submitted modal holds (None: it has no connectors section); slot i showed
    `shown[i]`, whose token it keeps unless a new one is typed."""
    indexes = sorted({int(m.group(1)) for key in values if (m := _BLOCK.fullmatch(key))})
    if not indexes:
        return None

    def text(index: int, field: str) -> str:
        value = values.get(block_id(index, field))
        return value if isinstance(value, str) else ""

    return [ConnectorRow(i, text(i, "name"), text(i, "url"), text(i, "token"), text(i, "tools"),
                         shown[i] if i < len(shown) else None) for i in indexes]
