"""Claude's memory tool (`memory_20250818`, platform.claude.com/docs/en/agents-and-tools/tool-use/memory-tool) over
a channel's memory: each entry is one file under /memories, its text the file's content. Claude asks for
`view`, `create`, `str_replace`, `insert`, `delete` and `rename`; `perform` reads one command against the entries
it may see and says what to answer (`tool_result`) and what to change — the caller changes the store. Results
and errors read as the SDK's own file-system memory tool words them. Pure: no I/O.
"""
from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from .memory import MEMORY_DIR, TEXT_LIMIT, MemoryEntry

MEMORY_TOOL = {"type": "memory_20250818", "name": "memory"}  # the request's `tools` entry
COMMANDS = ("view", "create", "str_replace", "insert", "delete", "rename")


class ToolError(Exception):
    """What the tool_result says, with is_error, when a command cannot be done."""


@dataclass(frozen=True)
class Change:
    kind: str  # create | edit | delete | rename
    path: str
    text: str = ""
    entry: MemoryEntry | None = None  # the file's entry (edit, delete, rename)


def perform(command: dict, files: Sequence[MemoryEntry]) -> tuple[str, Change | None]:
    """The tool_result's text and the change to make (None: nothing changes); raises ToolError."""
    verb = command.get("command")
    if verb not in COMMANDS:
        raise ToolError(f"Unknown command: {verb}")
    by_path = {entry.file: entry for entry in files}
    if verb == "view":
        return _view(_path(command, "path", allow_dir=True), by_path, command.get("view_range")), None
    if verb == "create":
        path = _path(command, "path")
        text = _text(command.get("file_text"))
        if path in by_path:  # the SDK's tool refuses too; an edit is str_replace
            raise ToolError(f"File {path} already exists")
        return f"File created successfully at: {path}", Change("create", path, text)
    if verb == "rename":
        old, new = _path(command, "old_path"), _path(command, "new_path")
        if new in by_path:
            raise ToolError(f"The destination {new} already exists")
        return f"Successfully renamed {old} to {new}", Change("rename", new, entry=_file(by_path, old))
    path = _path(command, "path")
    entry = _file(by_path, path)
    if verb == "delete":
        return f"Successfully deleted {path}", Change("delete", path, entry=entry)
    if verb == "str_replace":
        old, new = str(command.get("old_str") or ""), str(command.get("new_str") or "")
        count = entry.text.count(old) if old else 0
        if count == 0:
            raise ToolError(f"No replacement was performed, old_str `{old}` did not appear verbatim in {path}.")
        if count > 1:
            raise ToolError(f"No replacement was performed. Multiple occurrences of old_str `{old}`. "
                            "Please ensure it is unique")
        text = _text(entry.text.replace(old, new))
        return "The memory file has been edited.", Change("edit", path, text, entry)
    lines = entry.text.split("\n")
    at = command.get("insert_line")
    if not isinstance(at, int) or isinstance(at, bool) or not 0 <= at <= len(lines):
        raise ToolError(f"Invalid `insert_line` parameter: {at}. It should be within the range [0, {len(lines)}].")
    text = _text("\n".join([*lines[:at], str(command.get("insert_text") or ""), *lines[at:]]))
    return f"The file {path} has been edited.", Change("edit", path, text, entry)


def _path(command: dict, key: str, allow_dir: bool = False) -> str:
    path = str(command.get(key) or "").rstrip("/") or ""
    if path == MEMORY_DIR and allow_dir:
        return path
    if not path.startswith(MEMORY_DIR + "/") or ".." in path.split("/"):
        raise ToolError(f"Path must start with {MEMORY_DIR}, got: {command.get(key)}")
    if "/" in path[len(MEMORY_DIR) + 1:]:
        raise ToolError(f"The path {path} does not exist. Please provide a valid path.")  # no subdirectories
    return path


def _file(by_path: dict[str, MemoryEntry], path: str) -> MemoryEntry:
    if path not in by_path:
        raise ToolError(f"The path {path} does not exist. Please provide a valid path.")
    return by_path[path]


def _text(text) -> str:
    kept = str(text or "").strip()
    if not kept:
        raise ToolError("A memory file needs some text.")
    if len(kept) > TEXT_LIMIT:
        raise ToolError(f"Memory entries are short: keep a file under {TEXT_LIMIT} characters.")
    return kept


def _view(path: str, by_path: dict[str, MemoryEntry], view_range=None) -> str:
    if path == MEMORY_DIR:
        lines = [f"{len(e.text.encode())}B\t{p}" for p, e in sorted(by_path.items())]
        return (f"Here're the files and directories up to 2 levels deep in {MEMORY_DIR}, excluding hidden items:\n"
                + "\n".join([f"{sum(len(e.text.encode()) for e in by_path.values())}B\t{MEMORY_DIR}", *lines]))
    lines = _file(by_path, path).text.split("\n")
    start, end = 1, len(lines)
    if isinstance(view_range, list) and len(view_range) == 2 and all(isinstance(n, int) for n in view_range):
        start = max(1, view_range[0])
        end = len(lines) if view_range[1] == -1 else min(len(lines), view_range[1])
    numbered = [f"{str(n).rjust(6)}\t{lines[n - 1]}" for n in range(start, end + 1)]
    return f"Here's the content of {path} with line numbers:\n" + "\n".join(numbered)
