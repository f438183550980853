"""Reading Claude's stream: text as it comes, the server tools' work (web search and fetch) as it
starts and finishes, the pages it cited, and the usage it reports.

Events arrive as the Messages API streams them: a `server_tool_use` block (its input streamed as
JSON), then its `web_search_tool_result` or `web_fetch_tool_result` block, then text blocks whose
`citations_delta` events name the pages relied on; `message_delta` carries the final usage, with
`server_tool_use` counts. Raw search results never leave this module: only the sources do.

`message_start` names the model that answers and its usage splits cache writes by TTL
(`cache_creation.ephemeral_1h_input_tokens`); each round (a paused turn resumes in another call) is
priced on its own with the price table (bot/domain/spend.py) as its usage is complete.

A thinking model's answer starts with a `thinking` block (its text streamed by `thinking_delta`, empty with
display "omitted", then its `signature_delta`) or a `redacted_thinking` one: both are kept exactly as sent, so a
paused turn's continuation hands them back byte for byte, as the API requires; their text is never shown.

The MCP connector's calls come the same way: an `mcp_tool_use` block {id, name, server_name, input}
(its input streamed as JSON), then its `mcp_tool_result` {tool_use_id, is_error, content}. They are
shown as "connector · tool" with a one-line result and counted per connector; the result's content
never leaves this module (the answer's text is what is kept), and a connector whose call failed is
named in the completion so the answer can say so. An `mcp_tool_listing` block (the tools a connector's server
listed while the answer was produced) is kept as sent, like thinking, and handed back with a paused answer so
the API uses it rather than asking the server again; it is never shown.

The connectors' tokens the request carried are masked (`Masker`) in everything read here that is shown
or kept: the answer's text as it streams, tool names, results and errors.
"""
from __future__ import annotations

import json

from ..domain.context import estimate_tokens
from ..domain.model import Usage
from ..domain.spend import priced
from ..domain.text import Masker, storable
from ..services.ports import Completion, ReplyEvents, Source

_USAGE_FIELDS = {"input_tokens": "input_tokens", "output_tokens": "output_tokens",
                 "cache_read_input_tokens": "cache_read_tokens", "cache_creation_input_tokens": "cache_write_tokens"}
GOES_ON = ("pause_turn", "tool_use")  # the answer continues in another call (a paused turn, the memory tool's)
_TOOL_COUNTS = {"web_search_requests": "searches", "web_fetch_requests": "fetches"}


class Reading:
    def __init__(self, events: ReplyEvents | None, asked: str | None = None, secrets=()):
        """`asked`: the model the request named, priced until the API names the one that answered;
        `secrets`: what the request sent that must never be shown or kept (connectors' tokens)."""
        self.events = events
        self.masker = Masker(secrets)
        self.parts: list[str] = []
        self.counts: dict[str, int] = {}
        self.model: str | None = asked  # the model that answered, as the API named it
        self._tools: dict[int, tuple[str, str, list[str]]] = {}  # block index → (tool id, name, input JSON)
        self.cited: list[Source] = []  # pages the answer cites, in order
        self.found: list[Source] = []  # pages searches and fetches brought back, in order
        self.blocks: dict[int, dict] = {}  # this round's content blocks as the API sent them, by index
        self._client_json: dict[int, str] = {}  # a client tool use's input JSON so far, by block index
        self.stop_reason: str | None = None
        self.earlier_usage = Usage()
        self.connector_calls: dict[str, int] = {}  # connector → MCP tool calls in this answer
        self.failed_connectors: dict[str, str] = {}  # connector → what went wrong, first failure only
        self._calls: dict[str, str] = {}  # MCP tool use id → its connector

    def read(self, event: dict) -> None:
        """One event of the stream, as the API sent it (its JSON, not the SDK's models: building those cost
        more CPU than the rest of reading)."""
        kind = event["type"]
        if kind == "content_block_delta":
            self._delta(event["index"], event["delta"])
        elif kind == "content_block_start":
            self._start(event["index"], event["content_block"])
        elif kind == "content_block_stop" and event["index"] in self._tools:
            tool_id, name, json_parts = self._tools.pop(event["index"])
            if self.events:
                self.events.tool_started(tool_id, name, self._shown(_detail(name, "".join(json_parts))))
        elif kind == "message_start":
            message = event.get("message") or {}
            self.counts = _counts(message.get("usage"))
            self.model = message.get("model") or self.model
        elif kind == "message_delta":
            self.counts.update(_counts(event.get("usage")))  # final counts override the first ones
            self.stop_reason = (event.get("delta") or {}).get("stop_reason")
            if self.stop_reason not in GOES_ON:
                self._written(self.masker.rest())
            # a paused turn goes on; sources or a failed connector make a tail, shown with the finish in one call
            if self.events and self.stop_reason not in (None, *GOES_ON) and not (
                    self.cited or self.found or self.failed_connectors):
                self.events.ended()

    def resume(self) -> list[dict]:
        """Claude paused (`pause_turn`) or called the memory tool (`tool_use`): this round's content blocks, to
        hand back as they came, and a fresh start for the next round's events (text, sources and usage keep adding
        up)."""
        content = [self.blocks[i] for i in sorted(self.blocks)  # the API refuses empty text
                   if self.blocks[i].get("type") != "text" or self.blocks[i].get("text", "").strip()]
        texts = [b for b in content if b.get("type") == "text"]
        if texts:  # nor an assistant message whose text ends with whitespace
            texts[-1]["text"] = texts[-1]["text"].rstrip()
        self.earlier_usage += priced(self.model, Usage(**self.counts))
        self.blocks, self.counts, self._tools, self._client_json, self.stop_reason = {}, {}, {}, {}, None
        return content

    def client_calls(self) -> list[dict]:
        """This round's `tool_use` blocks (client tools: the memory tool), with their inputs whole."""
        return [self.blocks[i] for i in sorted(self.blocks) if self.blocks[i].get("type") == "tool_use"]

    def _delta(self, index: int, delta: dict) -> None:
        block = self.blocks.get(index, {})
        kind = delta.get("type")
        if kind == "text_delta":
            block["text"] = block.get("text", "") + delta["text"]
            self._written(self.masker.feed(storable(delta["text"])))
        elif kind == "thinking_delta":  # kept to be handed back; never shown ("omitted": it is empty)
            block["thinking"] = block.get("thinking", "") + delta.get("thinking", "")
        elif kind == "signature_delta":
            block["signature"] = delta.get("signature", "")
        elif kind == "input_json_delta" and index in self._tools:
            self._tools[index][2].append(delta.get("partial_json", ""))
            block["input"] = _parsed("".join(self._tools[index][2]))
        elif kind == "input_json_delta" and block.get("type") == "tool_use":  # a client tool's: kept, never shown
            self._client_json[index] = self._client_json.get(index, "") + delta.get("partial_json", "")
            block["input"] = _parsed(self._client_json[index])
        elif kind == "citations_delta":
            citation = delta.get("citation") or {}
            block.setdefault("citations", []).append(citation)
            if citation.get("url"):
                self.cited.append(Source(citation["url"], self._shown(citation.get("title") or "")))

    def _start(self, index: int, block: dict) -> None:
        self.blocks[index] = dict(block)  # its text and input grow as deltas come
        kind = block.get("type")
        if kind in ("thinking", "redacted_thinking") and self.events:
            self.events.thinking_started()  # nothing is shown of it; a long think is (reply.py: ChannelReply)
        elif kind == "server_tool_use":
            self._tools[index] = (block["id"], block["name"], [])
        elif kind == "mcp_tool_use":
            server = self._shown(str(block.get("server_name") or "?"))
            self._calls[block["id"]] = server
            self.connector_calls[server] = self.connector_calls.get(server, 0) + 1
            self._tools[index] = (block["id"], f"{server} · {self._shown(str(block['name']))}", [])
        elif kind == "mcp_tool_result":
            failed = bool(block.get("is_error"))
            line = _excerpt(self._shown(_first_line(block.get("content"))))
            server = self._calls.get(block.get("tool_use_id", ""), "?")
            if failed:
                self.failed_connectors.setdefault(server, line or "an error")
            if self.events:
                self.events.tool_finished(block["tool_use_id"], [], failed, line)
        elif kind in ("web_search_tool_result", "web_fetch_tool_result"):
            pages, failed = _pages(block.get("content"))
            pages = [Source(p.url, self._shown(p.title)) for p in pages]
            self.found.extend(pages)
            if self.events:
                self.events.tool_finished(block["tool_use_id"], pages, failed)

    def _written(self, text: str) -> None:
        if text:
            self.parts.append(text)
            if self.events:
                self.events.write(text)

    def _shown(self, text: str) -> str:
        """Text read from the stream, fit to show and keep: storable, the request's secrets masked."""
        return self.masker.mask(storable(text))

    def completion(self, stopped: bool = False) -> Completion:
        """What the call produced, priced; `stopped`: cut short by Stop — the API never sent its final usage,
        so the text written is counted as its output (an estimate)."""
        self._written(self.masker.rest())
        counts = dict(self.counts)
        text = "".join(self.parts)
        if stopped:
            counts["output_tokens"] = max(counts.get("output_tokens", 0), estimate_tokens(text))
        usage = self.earlier_usage + priced(self.model, Usage(**counts))
        return Completion(text, usage, _sources(self.cited, self.found), tuple(self.connector_calls.items()),
                          tuple(self.failed_connectors.items()), stopped=stopped, stop_reason=self.stop_reason)


def _counts(usage: dict | None) -> dict[str, int]:
    """The counts an event reports (a message_delta leaves out what did not change)."""
    usage = usage or {}
    counts = {ours: value for theirs, ours in _USAGE_FIELDS.items() if (value := usage.get(theirs)) is not None}
    hour = (usage.get("cache_creation") or {}).get("ephemeral_1h_input_tokens")
    if hour is not None:
        counts["cache_write_1h_tokens"] = hour
    tools = usage.get("server_tool_use") or {}
    counts.update({ours: value for theirs, ours in _TOOL_COUNTS.items() if (value := tools.get(theirs)) is not None})
    return counts


def _parsed(raw_input: str) -> dict:
    try:
        value = json.loads(raw_input or "{}")
    except ValueError:
        return {}
    return value if isinstance(value, dict) else {}


def _detail(name: str, raw_input: str) -> str:
    """What a tool call is about: the search's query, the fetched URL."""
    try:
        arguments = json.loads(raw_input or "{}")
    except ValueError:
        return ""
    if name not in ("web_search", "web_fetch") or not isinstance(arguments, dict):
        return ""  # a connector's call is shown by its name
    return storable(str(arguments.get("query" if name == "web_search" else "url", "")))


def _first_line(content) -> str:
    """An MCP result's first line of text, short: what its task card says it found."""
    if isinstance(content, str):
        text = content
    else:
        texts = [b.get("text") for b in content or () if isinstance(b, dict)]
        text = next((t for t in texts if t), "")
    return storable(str(text)).strip().split("\n", 1)[0]


def _excerpt(line: str) -> str:
    """Short: what a task card says a call found (cut once secrets are masked, so none is cut in half)."""
    return line if len(line) <= 120 else line[:119] + "…"


def _pages(content) -> tuple[list[Source], bool]:
    """The pages a search or fetch result holds, and whether it failed."""
    if isinstance(content, list):  # search results
        return [Source(r["url"], storable(r.get("title") or r["url"])) for r in content
                if isinstance(r, dict) and r.get("url")], False
    if isinstance(content, dict) and content.get("type") == "web_fetch_result":
        title = (content.get("content") or {}).get("title") or content["url"]
        return [Source(content["url"], storable(title))], False
    return [], True  # an error result


def _sources(cited: list[Source], found: list[Source]) -> tuple[Source, ...]:
    """What the answer relied on: the pages it cites; without citations, the pages it fetched or found."""
    seen, out = set(), []
    for source in cited or found:
        if source.url not in seen:
            seen.add(source.url)
            out.append(source)
    return tuple(out)
