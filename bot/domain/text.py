"""Text at the bot's edges: what no database can store never gets in, and what Slack shows of
Claude's words and fork topics neither pings nor phishes.

- `storable` (Slack in, Claude out): NUL characters removed and lone UTF-16 surrogates replaced by
  U+FFFD, so a person's message or a model's answer can never poison a session (PostgreSQL refuses
  NUL in text; a lone surrogate cannot be encoded at all).
- `neutralise` (Claude's Markdown: answers, summaries): special mentions (`<!channel>`, `<!here>`,
  `<!everyone>`, `<!subteam^…>`, `@channel`, `@here`, `@everyone`) are broken with a zero-width
  space; a user mention `<@U…>`/`<@W…>` becomes `@name` (a name, never a notification); a link
  whose visible text looks like an address (`[https://a](https://b)`, `[paypal.com](…)`,
  `<https://b|https://a>`) stops being a link — a zero-width space parts its label from its target,
  both stay visible and each bare address links to itself — and so do link reference definitions
  (`[x]: https://…`), which could give any `[x]` a hidden target. A plain-word label
  (`[the docs](https://…)`) is left alone, and so is code in fences.
- `settled` is the part of a growing answer that may be shown while it streams: neutralising more
  text never changes what neutralising it gave (a special or user mention, or a `<…|…>` link, is
  held back until it closes), so streamed messages, which can only be appended to, stay safe.
- `mrkdwn` (any text quoted inside Slack's mrkdwn): `&`, `<` and `>` escaped, so no link, mention
  or command can form, and `@channel`-style words broken.
- `topic` is the one way a fork topic is shown: whitespace folded, `mrkdwn`-escaped, and, where a
  block limits its length, shortened with "…" so the escaped result fits.
- `inert` (what a tool returned, a title made of a topic): data, never markup — one line, every link
  (`<target|label>`, `[label](target)`) unwrapped to `label (target)` so no address hides behind a
  label, mentions neutralised as in Claude's text, `<` and `>` left none that Slack could read as
  markup, cut to an excerpt.
- `Masker` hides the secrets the bot itself sent (connectors' tokens) in text it shows or keeps,
  also in text that arrives piece by piece: it holds back a tail that could begin a secret.
Pure functions: names come from the caller (`name_of`), so the domain stays free of I/O.

Numbers and ids that come from people or payloads, checked before they reach the store.

- `row_id`: a fork id, a stored turn's id, a fork or draft number — a whole number from 1 to the store's
  integer range (PostgreSQL `integer`); anything else (a word, a negative, 20 digits) is None.
- `is_slack_id`: a channel, user, team id or a message ts as Slack writes them — letters, digits, `.`,
  `_` and `-`, at most 32 characters (the store's columns): no NUL, no list, no number.

Each person's words reach Claude under a line naming them (`speaker_line`: `[alice <@U123>]`). A message someone
shared or forwarded with their own, as Claude reads it: plain text inside the sharer's turn, after their own words,
quoted and marked as shared —

    what do you make of this?

    [shared a message from alice <@U123>]
    > the build is red again

Invariants: pure and byte-stable — the same shares and words always give the same bytes (no dates,
links or ids that change), so the turn they are stored in keeps the prompt cache warm; the shared
text is quoted verbatim, line by line, so it can never pass for the sharer's own words.
"""
from __future__ import annotations

import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass


MAX_ROW_ID = 2**31 - 1
_DIGITS = re.compile(r"[0-9]{1,10}")
_SLACK_ID = re.compile(r"[A-Za-z0-9._-]{1,32}")


def row_id(value: object) -> int | None:
    """`value` (a payload's string, or a number) as a store id or number; None when it can't be one."""
    if isinstance(value, bool) or not isinstance(value, (str, int)):
        return None
    text = str(value).strip()
    if not _DIGITS.fullmatch(text):
        return None
    number = int(text)
    return number if 1 <= number <= MAX_ROW_ID else None


def is_slack_id(value: object) -> bool:
    return isinstance(value, str) and _SLACK_ID.fullmatch(value) is not None


ZWSP = "\u200b"
ELLIPSIS = "…"
REPLACEMENT = "\ufffd"
_NUL = "\x00"
_SURROGATE = re.compile("[\ud800-\udfff]")

NameOf = Callable[[str], "str | None"]

_SPECIAL = re.compile(r"<!(channel|here|everyone|subteam\^[^<>|\s]*)([^<>\n]*)>", re.IGNORECASE)
_AT_WORD = re.compile(r"@(channel|here|everyone)\b", re.IGNORECASE)
_USER = re.compile(r"<@([A-Z0-9]+)(?:\|[^<>\n]*)?>", re.IGNORECASE)
_MRKDWN_LINK = re.compile(r"<([a-zA-Z][a-zA-Z0-9+.-]*:[^|<>\n]*)\|([^<>\n]*)>")
_LINK_SEAM = re.compile(r"\]([(:])")  # where a Markdown link's label meets its target or definition
_DEFINITION_START = re.compile(r" {0,3}\[[^\[\]]+")  # a line's start up to a link definition's `]:`
_DOT = r"[.\uFF0E\u3002\uFF61]"  # dots browsers read as dots in host names
_LOOKS_LIKE_ADDRESS = re.compile(
    rf"[^\W\d_][\w+.-]*:/|www{_DOT}|(?:[\w-]+{_DOT})+[^\W\d_]{{2,}}\b|\b\d{{1,3}}(?:{_DOT}\d{{1,3}}){{3}}\b")
# on the last line, a `<` not closed before the next `<` (a mention that becomes a name leaves it
# open to a later `>`), or a word with `@`: what either becomes depends on text still to come
_UNSETTLED = re.compile(r"<[^<>\n]*(?:<[^\n]*)?\Z|\S*@\S*\Z")
_FENCE = "```"
LINK_LOOKBACK = 4_000  # characters searched back for a label's opening bracket; a longer label is not trusted


def storable(text: str) -> str:
    """`text` without NUL characters, each lone surrogate replaced by U+FFFD."""
    if _NUL in text:
        text = text.replace(_NUL, "")
    return _SURROGATE.sub(REPLACEMENT, text)


def neutralise(text: str, name_of: NameOf | None = None) -> str:
    """Claude's Markdown, made safe to post (see the module docstring)."""
    text = _USER.sub(lambda m: f"@{ZWSP}{_name(m.group(1), name_of)}", text)
    text = _MRKDWN_LINK.sub(lambda m: f"<{ZWSP}{m.group(1)}|{m.group(2)}>"
                            if _LOOKS_LIKE_ADDRESS.search(m.group(2)) else m.group(0), text)
    return break_mentions(_part_deceptive_links(text))


def settled(text: str) -> str:
    """The longest start of a growing `text` whose neutralised form no later text can change."""
    while True:  # cutting a word with `@` may leave a `<…` open again
        cut = _UNSETTLED.sub("", text)
        if cut == text:
            return text
        text = cut


def break_mentions(text: str) -> str:
    """Only the special mentions broken: nothing else changes."""
    text = _SPECIAL.sub(lambda m: f"<{ZWSP}!{m.group(1)}{m.group(2)}>", text)
    return _AT_WORD.sub(lambda m: f"@{ZWSP}{m.group(1)}", text)


def looks_like_address(text: str) -> bool:
    """Whether a link label could pass for a web address (then it must not hide another target)."""
    return _LOOKS_LIKE_ADDRESS.search(text) is not None


def mrkdwn(text: str) -> str:
    """Text quoted inside mrkdwn: shown as typed, never a link, mention or command."""
    escaped = text.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")
    return _AT_WORD.sub(lambda m: f"@{ZWSP}{m.group(1)}", escaped)


def topic(text: str, limit: int | None = None) -> str:
    """A fork topic for mrkdwn, at most `limit` characters once escaped (None: whole)."""
    folded = " ".join(text.split())
    shown = mrkdwn(folded)
    if limit is None or len(shown) <= limit:
        return shown
    lo, hi = 0, len(folded)
    while lo < hi:  # the longest prefix whose escaped form still fits beside the ellipsis
        mid = (lo + hi + 1) // 2
        if len(mrkdwn(folded[:mid].rstrip())) + len(ELLIPSIS) <= limit:
            lo = mid
        else:
            hi = mid - 1
    return mrkdwn(folded[:lo].rstrip()) + ELLIPSIS


_NOT_IN_NAMES = str.maketrans("", "", "<>[]()|")
_ANGLE_LINK = re.compile(r"<([^<>|\n]*)\|([^<>\n]*)>")
_MARKDOWN_LINK = re.compile(r"!?\[([^\[\]\n]*)\]\(([^()\s]*)[^()\n]*\)")
_ANGLES = str.maketrans({"<": "‹", ">": "›"})  # look-alikes: no mention, link or command can form
HIDDEN = "[hidden]"


def inert(text: str, limit: int) -> str:
    """Outside data (a tool's name or result, a title from a topic) as one plain line of at most `limit`
    characters that neither pings nor links anywhere but where it says (see the module docstring)."""
    line = " ".join(storable(text).split())
    line = _ANGLE_LINK.sub(lambda m: _unwrapped(m.group(2), m.group(1)), line)
    line = _MARKDOWN_LINK.sub(lambda m: _unwrapped(m.group(1), m.group(2)), line)
    line = _USER.sub(lambda m: f"@{ZWSP}{m.group(1)}", line)
    line = break_mentions(line).translate(_ANGLES)
    return line if len(line) <= limit else line[: limit - 1].rstrip() + ELLIPSIS


def _open_start(text: str, secret: str) -> int:
    """The length of the longest end of `text` that begins `secret` (0: none)."""
    tail = text[-(len(secret) - 1):] if len(secret) > 1 else ""
    start = tail.find(secret[0])
    while start != -1:
        if secret.startswith(tail[start:]):
            return len(tail) - start
        start = tail.find(secret[0], start + 1)
    return 0


def _unwrapped(label: str, target: str) -> str:
    label, target = label.strip(), target.strip()
    return target if not label or label == target else f"{label} ({target})"


class Masker:
    """Hides `secrets` in text: whole (`mask`), or as it streams (`feed` each piece, then `rest`)."""

    def __init__(self, secrets):
        self.secrets = sorted({s for s in secrets if s}, key=len, reverse=True)
        self._held = ""

    def mask(self, text: str) -> str:
        for secret in self.secrets:
            if secret in text:
                text = text.replace(secret, HIDDEN)
        return text

    def feed(self, piece: str) -> str:
        """What of the text so far can be shown: all but a tail that might begin a secret."""
        if not self.secrets:
            return piece
        text = self.mask(self._held + piece)
        keep = max((_open_start(text, secret) for secret in self.secrets), default=0)
        self._held = text[len(text) - keep:] if keep else ""
        return text[: len(text) - keep]

    def rest(self) -> str:
        held, self._held = self._held, ""
        return held


def _name(user_id: str, name_of: NameOf | None) -> str:
    """A person's name as plain words (people choose their names: no link or mention may form)."""
    name = " ".join((name_of(user_id) or "").translate(_NOT_IN_NAMES).split()) if name_of else ""
    return name or user_id


def _part_deceptive_links(text: str) -> str:
    """A zero-width space after the `]` of every link whose label looks like an address, and of every
    link definition, outside code fences. Decided at the `(` or `:`, from what comes before it."""
    parts, done = [], 0
    fenced = _fenced(text)
    for seam in _LINK_SEAM.finditer(text):
        close = seam.start()
        if any(start <= close < end for start, end in fenced):
            continue
        line_start = text.rfind("\n", 0, close) + 1
        if seam.group(1) == ":":
            deceptive = _DEFINITION_START.fullmatch(text, line_start, close) is not None
        else:
            opening = _opening_bracket(text, close)
            deceptive = opening is not None and (close - opening > LINK_LOOKBACK  # a label that long hides anything
                                                 or _LOOKS_LIKE_ADDRESS.search(text, opening + 1, close) is not None)
        if deceptive:
            parts += [text[done:close + 1], ZWSP]
            done = close + 1
    return "".join(parts) + text[done:] if parts else text


def _opening_bracket(text: str, close: int) -> int | None:
    """The `[` that the `]` at `close` closes (nested brackets balanced), within its paragraph; None
    when there is none. The search stops LINK_LOOKBACK characters back, answering where it stopped."""
    depth = 0
    for i in range(close - 1, -1, -1):
        if close - i > LINK_LOOKBACK:
            return i
        char = text[i]
        if char == "]":
            depth += 1
        elif char == "[":
            if depth == 0:
                return i
            depth -= 1
        elif char == "\n" and not text[text.rfind("\n", 0, i) + 1:i].strip():
            return None  # a blank line ends a paragraph, and a link's text with it
    return None


def _fenced(text: str) -> list[tuple[int, int]]:
    """Where code fences are (an unclosed one runs to the end): no link forms inside them."""
    spans, opened, position = [], None, 0
    for line in text.splitlines(keepends=True):
        if line.lstrip().startswith(_FENCE):
            if opened is None:
                opened = position
            else:
                spans.append((opened, position + len(line)))
                opened = None
        position += len(line)
    return spans + ([(opened, len(text))] if opened is not None else [])


@dataclass(frozen=True)
class SharedMessage:
    """What a share carries: the shared message's words, who wrote them, the names of its files."""

    text: str
    author_id: str | None = None
    author_name: str | None = None
    files: tuple[str, ...] = ()


def with_shared(words: str, shared: Sequence[SharedMessage]) -> str:
    """The sharer's words followed by each shared message, e.g.
    `with_shared("see?", [SharedMessage("red", "U1", "alice")])` → "see?\\n\\n[shared a message from alice <@U1>]\\n> red"."""
    parts = [words] if words else []
    parts.extend(quoted(message) for message in shared)
    return "\n\n".join(parts)


def quoted(message: SharedMessage) -> str:
    header = f"[shared a message from {_author(message)}"
    if message.files:
        header += f", with {', '.join(message.files)}"
    lines = [header + "]"]
    lines.extend(f"> {line}" if line else ">" for line in message.text.splitlines())
    return "\n".join(lines)


def _author(message: SharedMessage) -> str:
    name, user = (message.author_name or "").strip(), (message.author_id or "").strip()
    if name and user:
        return f"{name} <@{user}>"
    if user:
        return f"<@{user}>"
    return name or "someone"


def speaker_line(author_id: str | None, author_name: str | None) -> str:
    """`[alice <@U123>]`; a name without an id is not a person's (another app's post, an adopted
    thread's earlier messages: transcript.py)."""
    if author_id and author_name:
        return f"[{author_name} <@{author_id}>]"
    if author_id:
        return f"[<@{author_id}>]"
    return f"[{author_name}]" if author_name else "[unknown speaker]"
