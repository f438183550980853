"""Assemble the model input of a session (invariants 1–4 and 6).

- Parent input: system prompt + parent turns + merged-fork summaries, in order. Never a fork's turns.
- Inherited fork: parent turns up to the fork point + a boundary note + the fork's turns.
- Fork of a fork: its parent fork's input up to the fork point (the channel prefix that fork
  inherited + its own turns), exactly as that fork's own requests render it, + a boundary note + its
  turns — so its first request reads the parent fork's prompt cache. A fresh fork anywhere in the
  chain cuts everything above it.
- Fresh fork: system prompt + the fork's turns.

Rendering is byte-stable: a stored turn always renders to the same text (its speaker named, its files before its
words; each Turn object rendered once, and each run of blocks made into messages once: caching.py), the system
prompt never changes, and earlier turns are never rewritten. A `cache_control` breakpoint (the API's own shape: a
5-minute one carries no `ttl`) sits on the system prompt, at the end of an inherited parent prefix, and on the final
block, so a fork's first request reads the parent's prompt cache. Each breakpoint's TTL follows the pace of the
session whose turns end there (caching.py); it is the only thing it changes, never a byte of the prefix.

When the retention policy removed a session's earliest turns (its own, or those it inherits), its input
starts with one note saying so (PRUNED), whichever levels lost turns.

Every input is one the Messages API accepts: no block is empty or blank (an empty answer from
Claude renders as EMPTY_ANSWER, a fixed text, so the session does not fail forever after), the
first block is a user's (when the turns before an answer were deleted, OPENING stands in for
them), and at most MAX_BREAKPOINTS breakpoints are set, the system prompt's included.
"""
from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from itertools import compress, count
from operator import attrgetter

from . import caching
from .caching import (CacheMode, IdentityMemo, PrefixMemo, Ttl, cache_control, closing, lasting, longest,
                      own_history)
from .connectors import Connector
from .model import Attachment, FileKind, Fork, Mode, Role, Turn, TurnStatus
from .text import speaker_line


EMPTY_ANSWER = "[no answer: this reply was empty]"


@dataclass(frozen=True)
class Block:
    """One content block of a message: text, or an image or PDF by its Files API id (then `text` is
    the file's name, a document's title)."""

    role: str  # "user" or "assistant"
    text: str
    breakpoint: bool = False
    kind: str = "text"  # "text", "image" or "document"
    file_id: str | None = None
    ttl: Ttl = Ttl.FIVE_MINUTES  # a breakpoint's: 5 minutes is the API's default, sent without a `ttl`

    def content(self) -> dict:
        """The Messages API's content block, built once: a settled turn's blocks are the same objects request after
        request (rendered, below), so it is shared, and nobody may change it."""
        if (built := self.__dict__.get("_built_content")) is None:
            object.__setattr__(self, "_built_content", built := self._content())  # beside the frozen fields, not one
        return built

    def _content(self) -> dict:
        if self.kind == "text":
            content = {"type": "text", "text": self.text}
        else:
            content = {"type": self.kind, "source": {"type": "file", "file_id": self.file_id}}
            if self.kind == "document":
                content["title"] = self.text
        if self.breakpoint:
            content["cache_control"] = cache_control(self.ttl)
        return content

    def marked(self, breakpoint: bool = True, ttl: Ttl = Ttl.FIVE_MINUTES) -> Block:
        return replace(self, breakpoint=breakpoint, ttl=ttl if breakpoint else Ttl.FIVE_MINUTES)


COMPACTION_HEADER = "[Summary of the earlier conversation, compacted by Threadfork to save context:]"


def _render(turn: Turn) -> tuple[Block, ...]:
    if turn.role is Role.USER:
        files = tuple(file_block(a) for a in turn.attachments if not a.deleted)
        words = turn.text or (FILES_ONLY if files else "")
        return (*files, Block("user", f"{speaker_line(turn.author_id, turn.author_name)}\n{words}"))
    if turn.role is Role.SUMMARY:
        return (Block("user", turn.text),)
    if turn.role is Role.COMPACTION:
        return (Block("user", f"{COMPACTION_HEADER}\n{turn.text}"),)
    text = turn.text if turn.text.strip() else EMPTY_ANSWER
    if turn.status is TurnStatus.INTERRUPTED:
        text = f"{text}\n\n[This reply was interrupted and is incomplete.]"
    elif turn.status is TurnStatus.STOPPED:
        text = f"{text}\n\n{stopped_note(turn.stopped_by)}"
    return (Block("assistant", text),)


def stopped_note(user_id: str | None) -> str:
    """What follows a stopped answer in every later request: the same bytes each time (the stopper's id)."""
    return f"[<@{user_id}> stopped this reply here; it is incomplete.]" if user_id else \
        "[This reply was stopped here; it is incomplete.]"


FILES_ONLY = "[shared the files above, without a message]"


def file_block(attachment: Attachment) -> Block:
    """A shared file as one user block, placed before the words of its turn."""
    if attachment.kind is FileKind.TEXT:
        return Block("user", f"[File “{attachment.name}” ({attachment.media_type}):]\n{attachment.text}")
    return Block("user", attachment.name, kind=attachment.kind.value, file_id=attachment.file_id)


# a turn's blocks, remembered per Turn object (see caching.py): a 1,000-turn session renders only its new turns
render_turn: Callable[[Turn], tuple[Block, ...]] = IdentityMemo(_render)


SYSTEM_PROMPT = (
    "You are Threadfork, Claude working with a team inside Slack. The channel's top level is the "
    "main conversation. Side topics are explored in forks: Slack threads that are separate "
    "sessions; when a fork is merged, its summary is added to the main conversation. Each user "
    "message starts with a line naming who wrote it, so you can tell people apart and address "
    "them. Answer in Markdown, concisely, and never use @channel, @here or @everyone."
)

INSTRUCTIONS_HEADING = "Instructions from this channel's admins (follow them unless they conflict with the above):"


def system_prompt(base: str, instructions: str | None) -> str:
    """Threadfork's own text, then the channel's instructions (never before it)."""
    if not instructions or not instructions.strip():
        return base
    return f"{base}\n\n{INSTRUCTIONS_HEADING}\n{instructions.strip()}"


ESTIMATED_CHARS_PER_TOKEN = 4
MAX_BREAKPOINTS = 4  # the Messages API refuses a request with more cache_control blocks
@dataclass(frozen=True)
class ModelInput:
    system: str
    blocks: tuple[Block, ...]
    model: str | None = None  # the channel's choice; None: the configured model
    tools: tuple[str, ...] | None = None  # the channel's server tools; None: the configured ones
    connectors: tuple[Connector, ...] = ()  # the MCP servers Claude may call
    # their tokens by connector name, read as the request is made: never shown, compared or kept
    tokens: Mapping[str, str] = field(default_factory=dict, repr=False, compare=False)
    system_ttl: Ttl = Ttl.FIVE_MINUTES  # the system prompt's breakpoint: never shorter than a later one
    cache: CacheMode = CacheMode.AUTO  # how the TTLs were chosen (a request added on top follows it)
    effort: str | None = None  # the channel's output_config.effort ("default": the API's); None: the configured one
    # Claude's memory tool for this answer (memory_files.py): a command's input → (tool_result text, is_error);
    # None: the tool is not offered
    memory: Callable[[dict], tuple[str, bool]] | None = field(default=None, repr=False, compare=False)
    # sent as one mid-conversation system message after the last user's block (models that take them): what the
    # cached prefix must not carry, e.g. memory saved since it began; "": none
    late_system: str = ""

    def configured(self, instructions: str | None, model: str | None, tools: tuple[str, ...] | None,
                   connectors: tuple[Connector, ...] = ()) -> ModelInput:
        """This input as a channel's settings make it: its instructions after Threadfork's own text, its
        model, tools and connectors."""
        return replace(self, system=system_prompt(SYSTEM_PROMPT, instructions), model=model, tools=tools,
                       connectors=connectors)

    @property
    def breakpoints(self) -> int:
        """cache_control markers the request will carry: the system prompt's and the blocks'."""
        return 1 + sum(1 for block in self.blocks if block.breakpoint)

    def messages(self) -> list[dict]:
        """Messages API shape: consecutive blocks of one role share a message. Those built before of these very blocks
        up to the first breakpoint (a marked block is new each request) are reused, shared: 1,000 turns 1.3 → 0.1 ms."""
        settled = next(compress(count(), map(_BREAKPOINT, self.blocks)), len(self.blocks))  # in C
        start, built = _built.longest(self.blocks, settled) or (0, ())
        out = _join(list(built), self.blocks[start:settled], shared=len(built))
        if settled > start:
            _built.remember(self.blocks[:settled], tuple(out))
        out = _join(out, self.blocks[settled:], shared=len(out))
        if self.late_system:  # last, right after a user message: where the API takes one
            out.append({"role": "system", "content": [{"type": "text", "text": self.late_system}]})
        return out


_built: PrefixMemo[Block, tuple[dict, ...]] = PrefixMemo()  # messages, by the very blocks they were built of


def _join(out: list[dict], blocks: Sequence[Block], shared: int) -> list[dict]:
    """`out` with the blocks added, one of a role after another joining its message; out[:shared] are remembered,
    so the last of them is copied before it grows."""
    for block in blocks:
        if out and out[-1]["role"] == block.role:
            if len(out) == shared:
                out[-1], shared = {"role": block.role, "content": [*out[-1]["content"]]}, shared - 1
            out[-1]["content"].append(block.content())
        else:
            out.append({"role": block.role, "content": [block.content()]})
    return out


def boundary_note(fork: Fork) -> str:
    about = f" about: {fork.topic}" if fork.topic else ""
    if fork.private:
        return (
            f"[The above is background from the channel <#{fork.private_of}>. This thread is a private side "
            f"session of <@{fork.owner_id}> (fork #{fork.number} of their direct messages){about}. Nobody else "
            "sees it; only a summary they approve goes back to the channel. Later channel messages and other "
            "forks are not visible here.]"
        )
    if fork.nested:
        return (
            f"[The above is background from fork #{fork.parent_number}. This thread is a side session "
            f"(fork #{fork.number}) forked from it{about}. Later messages of fork #{fork.parent_number}, "
            "the channel and other forks are not visible here.]"
        )
    return (
        f"[The above is background from the channel. This thread is a side session "
        f"(fork #{fork.number}){about}. Later channel messages and other forks are not visible here.]"
    )


UNSEEN = (TurnStatus.STREAMING, TurnStatus.ABORTED, TurnStatus.DECLINED)


def in_context(turns: Sequence[Turn]) -> list[Turn]:
    """Turns the model sees: the latest compaction stands in for the turns it covers; answers still
    being written or that failed are left out."""
    visible = [t for t in turns if t.status not in UNSEEN]
    compactions = [t for t in visible if t.role is Role.COMPACTION]
    if not compactions:
        return visible
    latest = compactions[-1]
    return [latest] + [t for t in visible if t.role is not Role.COMPACTION and t.seq > latest.covers_seq]


def rendered(turns: Sequence[Turn]) -> list[Block]:
    """The blocks of turns the model sees, in order. The blocks of the settled turns (all but the trailing
    ones still waiting or being written, whose objects change) are remembered, so the next request of the
    session renders only the turns after them (caching.py)."""
    cut = len(turns)
    while cut and turns[cut - 1].status in CHANGING:
        cut -= 1
    start, (blocks, latest) = _settled_blocks.longest(turns, cut) or (0, ((), None))
    if start < cut:
        settled = turns[start:cut]
        if _compacts(settled):  # it stands in for turns already rendered: start afresh
            blocks, latest = _fresh(turns[:cut])
        else:
            blocks += _after(latest, settled)
        _settled_blocks.remember(turns[:cut], (blocks, latest))
    if _compacts(turns[cut:]):
        return list(_fresh(turns)[0])
    return [*blocks, *_after(latest, turns[cut:])]


CHANGING = (TurnStatus.PENDING, TurnStatus.STREAMING)  # a later read of the session has a new object for it
# the blocks of a session's settled turns and the latest compaction among them, by those very turn objects
_settled_blocks: PrefixMemo[Turn, tuple[tuple[Block, ...], Turn | None]] = PrefixMemo()


def _compacts(turns: Sequence[Turn]) -> bool:
    return any(t.role is Role.COMPACTION and t.status not in UNSEEN for t in turns)


def _fresh(turns: Sequence[Turn]) -> tuple[tuple[Block, ...], Turn | None]:
    """The blocks of these turns, and the compaction that stands in for the earlier ones (if any)."""
    latest = next((t for t in reversed(turns) if t.role is Role.COMPACTION and t.status not in UNSEEN), None)
    return tuple(block for turn in in_context(turns) for block in render_turn(turn)), latest


def _after(latest: Turn | None, turns: Sequence[Turn]) -> tuple[Block, ...]:
    """The blocks of turns (no compaction among them) that follow turns whose latest compaction is `latest`,
    as in_context would render them."""
    covered = latest.covers_seq if latest is not None else None
    return tuple(block for turn in turns if turn.status not in UNSEEN
                 and (covered is None or turn.seq > covered) for block in render_turn(turn))


def parent_input(parent_turns: Sequence[Turn], pruned: bool = False, cache: CacheMode = CacheMode.AUTO) -> ModelInput:
    """`pruned`: the retention policy removed the parent's earliest turns; `cache`: THREADFORK_CACHE_TTL."""
    moving = closing(cache, parent_turns)
    return _finish(_noted(pruned) + rendered(parent_turns), moving, cache,
                   _own_history(cache, parent_turns, moving))


def fork_input(fork: Fork, inherited: Sequence[Turn], own: Sequence[Turn],
               ancestors: Sequence[tuple[Fork, Sequence[Turn]]] = (), channel_pruned: bool = False,
               cache: CacheMode = CacheMode.AUTO) -> ModelInput:
    """`inherited`: the channel's turns up to the topmost fork point; `ancestors`: for a fork of a
    fork, the forks above it from the top down, each with its turns up to the next one's fork point;
    `channel_pruned`: the retention policy removed the channel's earliest turns. The breakpoint closing
    each level's turns keeps that settled history (caching.lasting), the final one moves at the fork's pace."""
    levels = [*ancestors, (fork, own)]
    cut = max((i for i, (level, _) in enumerate(levels) if level.mode is Mode.FRESH), default=None)
    shown = levels if cut is None else levels[cut:]  # a fresh fork in the chain cuts everything above it
    pruned = any(level.pruned for level, _ in shown) or (cut is None and channel_pruned)
    blocks = _noted(pruned) + (rendered(inherited) if cut is None else [])
    above: Sequence[Turn] = inherited  # the turns of the level whose end the next breakpoint closes
    for position, (level, turns) in enumerate(shown):
        if blocks and not (position == 0 and cut is not None):
            blocks[-1] = blocks[-1].marked(ttl=lasting(cache, above))
            blocks.append(Block("user", boundary_note(level)))
        blocks.extend(rendered(turns))
        above = turns
    moving = closing(cache, own)
    return _finish(blocks, moving, cache, _own_history(cache, own, moving))


def _own_history(cache: CacheMode, turns: Sequence[Turn], moving: Ttl) -> tuple[int, Ttl] | None:
    """Where the session's own settled history ends — how many blocks, those of the turns waiting for this
    answer, come after it — and its breakpoint's TTL; None when it has no such history or needs no mark."""
    ttl = own_history(cache, turns, moving)
    if ttl is None:
        return None
    waiting, answered = 0, False
    for turn in reversed(turns):  # from the end: the waiting turns, up to the first one answered before them
        if turn.status in UNSEEN:
            continue
        if turn.status is not TurnStatus.PENDING:
            answered = True
            break
        waiting += len(render_turn(turn))
    return (waiting, ttl) if waiting and answered else None


PRUNED = Block("user", "[Earlier turns of this conversation were removed under the workspace's retention policy.]")
def _noted(pruned: bool) -> list[Block]:
    """The one note at the very start of an input some of whose turns the retention policy removed."""
    return [PRUNED] if pruned else []


UNANSWERED = "[Some messages above were kept without an answer; answer them now.]"


def asking(base: ModelInput) -> ModelInput:
    """The input that asks for an answer ends with a user's block: after a final assistant block
    (an earlier message retried with 🔁 once others were answered) the API would continue that
    answer instead, and refuses one that ends with whitespace."""
    if not base.blocks or base.blocks[-1].role != "assistant":
        return base
    return with_request(base, UNANSWERED, base.blocks[-1].ttl)


def with_request(base: ModelInput, text: str, ttl: Ttl | None = None) -> ModelInput:
    """One more user block after a session's history (merge and compaction prompts); its breakpoint's
    `ttl`, by default that of a prefix read once (caching.one_off)."""
    blocks = [_plain(b) if i == len(base.blocks) - 1 else b for i, b in enumerate(base.blocks)]
    ttl = caching.one_off(base.cache) if ttl is None else ttl
    finished = _finish(blocks + [Block("user", text)], ttl, base.cache)
    return replace(base, blocks=finished.blocks, system_ttl=longest(base.system_ttl, finished.system_ttl))


COMPACTION_PROMPT = (
    "[Compaction request] The conversation above is getting long. Rewrite it as one summary that will "
    "replace it in your context from now on; the most recent messages stay verbatim after it. Keep, in "
    "this order: decisions made; constraints people stated (quoted verbatim, with who said them); the "
    "results of merged forks (by fork number and topic); open questions; artifacts such as code or exact "
    "values (verbatim, fenced); who is who. Drop pleasantries and superseded ideas. No preamble."
)


def compaction_input(turns: Sequence[Turn], cache: CacheMode = CacheMode.AUTO) -> ModelInput:
    """The request that compacts `turns` (already cut at the compaction point)."""
    return with_request(_finish(rendered(turns), closing(cache, turns), cache), COMPACTION_PROMPT)


def estimate_tokens(text: str) -> int:
    return max(1, len(text) // ESTIMATED_CHARS_PER_TOKEN) if text else 0


OPENING = Block("user", "[The messages before this point were deleted.]")


def _finish(blocks: list[Block], final: Ttl = Ttl.FIVE_MINUTES, cache: CacheMode = CacheMode.AUTO,
            history: tuple[int, Ttl] | None = None) -> ModelInput:
    """Open with a user's block, put the moving breakpoint on the final block (with TTL `final`) and, with
    `history` (blocks after it, TTL), one on the session's settled history; keep the latest breakpoints the
    API allows beside the system prompt's, and none shorter-lived than a later one."""
    if blocks and blocks[0].role != "user":
        blocks.insert(0, OPENING)
    if history and len(blocks) > history[0]:
        at = len(blocks) - history[0] - 1
        blocks[at] = blocks[at].marked(ttl=longest(history[1], blocks[at].ttl if blocks[at].breakpoint else history[1]))
    if blocks:
        blocks[-1] = blocks[-1].marked(ttl=final)
    marked = list(compress(range(len(blocks)), map(_BREAKPOINT, blocks)))  # in C: a long history has ~1,000
    for i in marked[: max(0, len(marked) - (MAX_BREAKPOINTS - 1))]:
        blocks[i] = _plain(blocks[i])
    kept = [i for i in marked if blocks[i].breakpoint]
    ttls = caching.settled([blocks[i].ttl for i in kept])
    for i, ttl in zip(kept, ttls):
        if blocks[i].ttl is not ttl:
            blocks[i] = blocks[i].marked(ttl=ttl)
    system_ttl = ttls[0] if ttls else caching.chosen(cache, ())
    return ModelInput(SYSTEM_PROMPT, tuple(blocks), system_ttl=system_ttl, cache=cache)


_BREAKPOINT = attrgetter("breakpoint")


def _plain(block: Block) -> Block:
    return block.marked(False) if block.breakpoint else block
