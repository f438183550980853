"""What an answer's stop reason means for the people reading it and for the session. Pure.

From platform.claude.com "Stop reasons and fallback" (build-with-claude/handling-stop-reasons) and "Handle
streaming refusals": `refusal` — Claude declined; the context must be reset, or refusals continue, so the
refused exchange leaves what later requests send (domain/queue.py reply_status); `max_tokens` — the answer was
cut at the request's limit (thinking and text together); `model_context_window_exceeded` — the answer filled the
model's context window, treat it as truncated. Each ends the answer with a short note; a cut answer can be
carried on (a Continue button, or once by itself after the session was compacted).
"""
from __future__ import annotations

REFUSAL = "refusal"
MAX_TOKENS = "max_tokens"
CONTEXT_FULL = "model_context_window_exceeded"
CUT = (MAX_TOKENS, CONTEXT_FULL)

# the user turn a Continue (or the automatic carry-on after compaction) adds: the API takes no assistant
# prefill on Claude Sonnet 5.5, so a cut answer is carried on by asking for the rest
CONTINUE_PROMPT = "[Continue your previous answer exactly where it was cut off, without repeating what it said.]"
REFIT_PROMPT = ("[The conversation was compacted because your previous answer filled the context window. "
                "Continue that answer exactly where it was cut off, without repeating what it said.]")

DECLINED_NOTE = ("_🚫 Claude declined to answer this. The request and this answer are left out of the "
                 "conversation from here on, so you can go on: rephrase it or ask something else._")
MAX_TOKENS_NOTE = ("_✂️ The answer reached its length limit (thinking and text share it) and was cut here. "
                   "Press *Continue* to carry it on._")
REFITTED_NOTE = ("_✂️ The conversation filled Claude's context window and this answer was cut. Older turns were "
                 "compacted; the answer carries on below._")
CONTEXT_FULL_NOTE = ("_✂️ The conversation filled Claude's context window and this answer was cut; nothing more "
                     "could be compacted. Press *Continue* to try again, or open a fresh fork (`/fork --fresh`)._")


def stop_note(stop_reason: str | None, refitted: bool = False) -> str:
    """The note an answer ends with ("" for one that simply ended)."""
    if stop_reason == REFUSAL:
        return DECLINED_NOTE
    if stop_reason == MAX_TOKENS:
        return MAX_TOKENS_NOTE
    if stop_reason == CONTEXT_FULL:
        return REFITTED_NOTE if refitted else CONTEXT_FULL_NOTE
    return ""


def continuable(stop_reason: str | None, refitted: bool = False) -> bool:
    """A Continue button goes under it: the answer was cut and does not carry on by itself."""
    return stop_reason == MAX_TOKENS or (stop_reason == CONTEXT_FULL and not refitted)
