"""Reading Claude's stream: text as it comes, the server tools' work (web search and fetch) as it
starts and finishes, the pages it cited, and the usage it reports.

Events arrive as the Messages API streams them: a `server_tool_use` block (its input streamed as
JSON), then its `web_search_tool_result` or `web_fetch_tool_result` block, then text blocks whose
`citations_delta` events name the pages relied on; `message_delta` carries the final usage, with
`server_tool_use` counts. Raw search results never leave this module: only the sources do.
"""
from __future__ import annotations

import json

from ..domain.model import Usage
from ..domain.text import storable
from ..services.ports import Completion, ReplyEvents, Source

_USAGE_FIELDS = {"input_tokens": "input_tokens", "output_tokens": "output_tokens",
                 "cache_read_input_tokens": "cache_read_tokens", "cache_creation_input_tokens": "cache_write_tokens"}
_TOOL_COUNTS = {"web_search_requests": "searches", "web_fetch_requests": "fetches"}


class Reading:
    def __init__(self, events: ReplyEvents | None):
        self.events = events
        self.parts: list[str] = []
        self.counts: dict[str, int] = {}
        self._tools: dict[int, tuple[str, str, list[str]]] = {}  # block index → (tool id, name, input JSON)
        self.cited: list[Source] = []  # pages the answer cites, in order
        self.found: list[Source] = []  # pages searches and fetches brought back, in order

    def read(self, event) -> None:
        kind = event.type
        if kind == "content_block_delta":
            self._delta(event.index, event.delta)
        elif kind == "content_block_start":
            self._start(event.index, event.content_block)
        elif kind == "content_block_stop" and event.index in self._tools:
            tool_id, name, json_parts = self._tools.pop(event.index)
            if self.events:
                self.events.tool_started(tool_id, name, _detail(name, "".join(json_parts)))
        elif kind == "message_start":
            self.counts = _counts(event.message.usage)
        elif kind == "message_delta":
            self.counts.update(_counts(event.usage))  # final counts override the first ones

    def _delta(self, index: int, delta) -> None:
        if delta.type == "text_delta":
            text = storable(delta.text)
            self.parts.append(text)
            if self.events:
                self.events.write(text)
        elif delta.type == "input_json_delta" and index in self._tools:
            self._tools[index][2].append(delta.partial_json)
        elif delta.type == "citations_delta" and getattr(delta.citation, "url", None):
            self.cited.append(Source(delta.citation.url, storable(getattr(delta.citation, "title", None) or "")))

    def _start(self, index: int, block) -> None:
        if block.type == "server_tool_use":
            self._tools[index] = (block.id, block.name, [])
        elif block.type in ("web_search_tool_result", "web_fetch_tool_result"):
            pages, failed = _pages(block.content)
            self.found.extend(pages)
            if self.events:
                self.events.tool_finished(block.tool_use_id, pages, failed)

    def completion(self) -> Completion:
        return Completion(text="".join(self.parts), usage=Usage(**self.counts), sources=_sources(self.cited, self.found))


def _counts(usage) -> dict[str, int]:
    """The counts an event reports (a message_delta leaves out what did not change)."""
    counts = {ours: value for theirs, ours in _USAGE_FIELDS.items()
              if (value := getattr(usage, theirs, None)) is not None}
    tools = getattr(usage, "server_tool_use", None)
    counts.update({ours: value for theirs, ours in _TOOL_COUNTS.items()
                   if (value := getattr(tools, theirs, None)) is not None})
    return counts


def _detail(name: str, raw_input: str) -> str:
    """What a tool call is about: the search's query, the fetched URL."""
    try:
        arguments = json.loads(raw_input or "{}")
    except ValueError:
        return ""
    value = arguments.get("query" if name == "web_search" else "url", "") if isinstance(arguments, dict) else ""
    return storable(str(value))


def _pages(content) -> tuple[list[Source], bool]:
    """The pages a search or fetch result holds, and whether it failed."""
    if isinstance(content, list):  # search results
        return [Source(r.url, storable(r.title or r.url)) for r in content if getattr(r, "url", None)], False
    if getattr(content, "type", "") == "web_fetch_result":
        document = getattr(content, "content", None)
        title = getattr(document, "title", None) or content.url
        return [Source(content.url, storable(title))], False
    return [], True  # an error result


def _sources(cited: list[Source], found: list[Source]) -> tuple[Source, ...]:
    """What the answer relied on: the pages it cites; without citations, the pages it fetched or found."""
    seen, out = set(), []
    for source in cited or found:
        if source.url not in seen:
            seen.add(source.url)
            out.append(source)
    return tuple(out)
