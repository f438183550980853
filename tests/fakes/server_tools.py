"""Scripted use of the server tools web search and web fetch, as the Messages API returns it.

Sources: platform.claude.com "Web search tool" and "Web fetch tool" (response and streaming
examples, error codes, `max_uses`, fetches limited to URLs already in the conversation), the
anthropic SDK's response types (ServerToolUseBlock, WebSearchToolResultBlock, WebSearchResultBlock,
WebFetchToolResultBlock, WebFetchBlock, CitationsWebSearchResultLocation, ServerToolUsage), and
streams recorded by other clients' tests. An answer that uses tools is, in order:
- an optional text block (`preface`);
- per tool use, a `server_tool_use` block {id "srvtoolu_…", name, input} whose input streams as
  `input_json_delta` pieces after a start with `input: {}`, then its result block, sent whole in
  its `content_block_start`: `web_search_tool_result` {tool_use_id, content: [web_search_result
  {url, title, encrypted_content, page_age}]} or `web_fetch_tool_result` {tool_use_id, content:
  web_fetch_result {url, retrieved_at, content: document {source: text/plain, title, citations}}},
  or for an error {type web_search_tool_result_error | web_fetch_tool_result_error, error_code};
- the answer's text blocks; a cited one starts with `citations: []`, then one `citations_delta`
  per `web_search_result_location` {url, title, cited_text, encrypted_index}, then its text.
Usage carries `server_tool_use: {web_search_requests, web_fetch_requests}` (successful uses).
A tool the request does not offer is never used (the model cannot call it); uses past the tool's
`max_uses` get `max_uses_exceeded`; a fetch of a URL found neither in the request nor in an earlier
result of the same answer gets `url_not_in_prior_context`, as the real tool refuses it.
"""
from __future__ import annotations

import base64
import hashlib
import itertools
import json
from dataclasses import dataclass, field
from datetime import datetime, timezone

from .tool_rules import server_tools

SEARCH_ERRORS = ("invalid_tool_input", "unavailable", "max_uses_exceeded", "too_many_requests", "query_too_long",
                 "request_too_large")
FETCH_ERRORS = ("invalid_tool_input", "url_too_long", "url_not_allowed", "url_not_in_prior_context",
                "url_not_accessible", "unsupported_content_type", "too_many_requests", "max_uses_exceeded",
                "unavailable", "content_too_large")
_ids = itertools.count(1)


@dataclass
class Search:
    query: str
    results: list = field(default_factory=list)  # (url, title) or (url, title, page_age)
    error: str | None = None  # one of SEARCH_ERRORS instead of results

    def __post_init__(self):
        if self.error is not None and self.error not in SEARCH_ERRORS:
            raise ValueError(f"web search error codes are {SEARCH_ERRORS}")


@dataclass
class Fetch:
    url: str
    title: str | None = None
    text: str = "The fetched page's text."
    error: str | None = None  # one of FETCH_ERRORS instead of the page

    def __post_init__(self):
        if self.error is not None and self.error not in FETCH_ERRORS:
            raise ValueError(f"web fetch error codes are {FETCH_ERRORS}")


@dataclass
class Cited:
    """Words of the answer citing one search result (by its URL)."""
    text: str
    url: str
    cited_text: str | None = None  # the passage of the page; defaults to the result's title


def opaque(*parts: str) -> str:
    """A stand-in for the API's encrypted fields: stable, base64, meaningless."""
    return base64.b64encode(hashlib.sha256("|".join(parts).encode()).digest() * 2).decode()


def check_citations(tools: list, cited: list) -> None:
    urls = {result[0] for tool in tools if isinstance(tool, Search) for result in tool.results}
    for item in cited:
        if isinstance(item, Cited) and item.url not in urls:
            raise ValueError(f"{item.url} is in no scripted search result: a citation points at a result")


def tool_blocks(request: dict, tools: list) -> tuple[list[dict], dict]:
    """The server_tool_use and result blocks of the scripted uses the request allows, and the usage."""
    offered = server_tools(request)
    context = json.dumps(request.get("messages", []), ensure_ascii=False)
    used = {"web_search": 0, "web_fetch": 0}
    counts = {"web_search_requests": 0, "web_fetch_requests": 0}
    blocks = []
    for tool in tools:
        name = "web_search" if isinstance(tool, Search) else "web_fetch"
        if name not in offered:
            continue
        used[name] += 1
        use_id = f"srvtoolu_01Fake{next(_ids):010d}"
        limit = offered[name].get("max_uses")
        over = limit is not None and used[name] > limit
        if isinstance(tool, Search):
            blocks += [_use(use_id, name, {"query": tool.query}), _search_result(use_id, tool, over)]
            counts["web_search_requests"] += int(not over and tool.error is None)
            context += json.dumps(tool.results, ensure_ascii=False)
        else:
            error = "max_uses_exceeded" if over else tool.error
            if error is None and tool.url not in context:
                error = "url_not_in_prior_context"
            blocks += [_use(use_id, name, {"url": tool.url}), _fetch_result(use_id, tool, error, offered[name])]
            counts["web_fetch_requests"] += int(error is None)
            context += json.dumps([tool.url, tool.text], ensure_ascii=False)
    return blocks, counts


def _use(use_id: str, name: str, given: dict) -> dict:
    return {"type": "server_tool_use", "id": use_id, "name": name, "input": given}


def _search_result(use_id: str, search: Search, over: bool) -> dict:
    error = "max_uses_exceeded" if over else search.error
    if error:
        content = {"type": "web_search_tool_result_error", "error_code": error}
    else:
        content = [{"type": "web_search_result", "url": result[0], "title": result[1],
                    "encrypted_content": opaque(result[0], result[1]),
                    "page_age": result[2] if len(result) > 2 else None} for result in search.results]
    return {"type": "web_search_tool_result", "tool_use_id": use_id, "content": content}


def _fetch_result(use_id: str, fetch: Fetch, error: str | None, tool: dict) -> dict:
    if error:
        return {"type": "web_fetch_tool_result", "tool_use_id": use_id,
                "content": {"type": "web_fetch_tool_result_error", "error_code": error}}
    document = {"type": "document", "source": {"type": "text", "media_type": "text/plain", "data": fetch.text},
                "title": fetch.title, "citations": {"enabled": bool((tool.get("citations") or {}).get("enabled"))}}
    retrieved = datetime.now(timezone.utc).isoformat(timespec="seconds").replace("+00:00", "Z")
    return {"type": "web_fetch_tool_result", "tool_use_id": use_id,
            "content": {"type": "web_fetch_result", "url": fetch.url, "retrieved_at": retrieved, "content": document}}


def cited_blocks(cited: list, tools: list) -> list[dict]:
    titles = {result[0]: result[1] for tool in tools if isinstance(tool, Search) for result in tool.results}
    blocks = []
    for item in cited:
        if isinstance(item, str):
            blocks.append({"type": "text", "text": item})
            continue
        passage = item.cited_text or titles[item.url]
        citation = {"type": "web_search_result_location", "url": item.url, "title": titles[item.url],
                    "cited_text": passage, "encrypted_index": opaque(item.url, passage)}
        blocks.append({"type": "text", "text": item.text, "citations": [citation]})
    return blocks


def streamed(index: int, block: dict) -> list[tuple[str, dict]]:
    """The events of a non-text block: start (with the input emptied for a tool use), deltas, stop."""
    events = []
    if block["type"] in ("server_tool_use", "mcp_tool_use", "tool_use"):
        given = json.dumps(block["input"])
        half = len(given) // 2
        events.append(("content_block_start", {"type": "content_block_start", "index": index,
                                               "content_block": {**block, "input": {}}}))
        events += [("content_block_delta", {"type": "content_block_delta", "index": index,
                                            "delta": {"type": "input_json_delta", "partial_json": piece}})
                   for piece in (given[:half], given[half:])]
    else:
        events.append(("content_block_start", {"type": "content_block_start", "index": index, "content_block": block}))
    events.append(("content_block_stop", {"type": "content_block_stop", "index": index}))
    return events
