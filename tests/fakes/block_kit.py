"""What Slack refuses in a message's `blocks`, a view, or a message's text: checked with slack-sdk's
own Block Kit models, plus the limits Slack documents that the models do not encode.

- Every block is parsed by `Block.parse` (an unknown type is refused) and rebuilt with `to_dict()`,
  which runs every validator of the block and of what it contains (section text ≤ 3,000,
  header ≤ 150, button text ≤ 75, markdown block ≤ 12,000, actions ≤ 25 elements…). A key the
  rebuilt block lacks was either unknown to Block Kit or empty (Slack refuses empty text): refused.
- A message holds ≤ 50 blocks, a Home tab ≤ 100 (`View` validates its own count), and all markdown
  blocks of one payload together ≤ 12,000 characters (docs.slack.dev, markdown block).
- `text` ≤ 40,000 characters (Slack: "msg_too_long"); `markdown_text` ≤ 12,000.
- block_ids unique and ≤ 255 characters; input blocks, options, text and number inputs as Slack
  limits them, and a modal's title, buttons and fields (view_rules.py: what the models let through).
Each problem is a short string naming where it is, as Slack's `[json-pointer:…]` messages do.
"""
from __future__ import annotations

from slack_sdk.errors import SlackObjectFormationError
from slack_sdk.models.blocks import Block
from slack_sdk.models.views import View

from .view_rules import block_ids_problems, input_problems, modal_problems

MESSAGE_BLOCKS = 50
TEXT_LIMIT = 40_000
MARKDOWN_TEXT_LIMIT = 12_000
MARKDOWN_BLOCKS_LIMIT = 12_000  # all markdown blocks of one payload together


def text_problems(args: dict) -> list[str]:
    problems = []
    if isinstance(args.get("text"), str) and len(args["text"]) > TEXT_LIMIT:
        problems.append(f"text has {len(args['text']):,} characters, over {TEXT_LIMIT:,}")
    if isinstance(args.get("markdown_text"), str) and len(args["markdown_text"]) > MARKDOWN_TEXT_LIMIT:
        problems.append(f"markdown_text has {len(args['markdown_text']):,} characters, over {MARKDOWN_TEXT_LIMIT:,}")
    return problems


def blocks_problems(blocks, pointer: str = "/blocks", limit: int = MESSAGE_BLOCKS) -> list[str]:
    if not isinstance(blocks, list):
        return [f"blocks must be a JSON array [json-pointer:{pointer}]"]
    problems = [f"{len(blocks)} blocks, over {limit} [json-pointer:{pointer}]"] if len(blocks) > limit else []
    markdown = 0
    problems += block_ids_problems(blocks, pointer) + input_problems(blocks, pointer)
    for i, block in enumerate(blocks):
        problems += _block_problems(block, f"{pointer}/{i}")
        if isinstance(block, dict) and block.get("type") == "markdown" and isinstance(block.get("text"), str):
            markdown += len(block["text"])
    if markdown > MARKDOWN_BLOCKS_LIMIT:
        problems.append(f"markdown blocks hold {markdown:,} characters together, over {MARKDOWN_BLOCKS_LIMIT:,} "
                        f"[json-pointer:{pointer}]")
    return problems


def view_problems(view) -> list[str]:
    if not isinstance(view, dict):
        return ["view must be an object [json-pointer:/view]"]
    try:
        View(**view).validate_json()
    except (SlackObjectFormationError, TypeError, KeyError) as error:
        return [f"{error} [json-pointer:/view]"]
    problems = modal_problems(view) if view.get("type") == "modal" else []
    return problems + blocks_problems(view.get("blocks") or [], "/view/blocks", limit=View.blocks_max_length)


def _block_problems(block, pointer: str) -> list[str]:
    if not isinstance(block, dict) or not isinstance(block.get("type"), str):
        return [f"a block must be an object with a type [json-pointer:{pointer}]"]
    try:
        parsed = Block.parse(block)
        if parsed is None:
            return [f"unknown block type {block['type']!r} [json-pointer:{pointer}]"]
        rebuilt = parsed.to_dict()
    except (SlackObjectFormationError, TypeError, KeyError, AttributeError) as error:
        return [f"{error} [json-pointer:{pointer}]"]
    return [f"{where} was dropped (unknown or empty) [json-pointer:{pointer}{where}]"
            for where in _dropped(block, rebuilt, "")]


def _dropped(original, rebuilt, path: str) -> list[str]:
    """Paths present in `original` that the model's rebuilt form does not have."""
    if isinstance(original, dict):
        if not isinstance(rebuilt, dict):
            return [path]
        return [p for key, value in original.items()
                for p in ([f"{path}/{key}"] if key not in rebuilt else _dropped(value, rebuilt[key], f"{path}/{key}"))]
    if isinstance(original, list):
        if not isinstance(rebuilt, list) or len(rebuilt) != len(original):
            return [path]
        return [p for i, (a, b) in enumerate(zip(original, rebuilt)) for p in _dropped(a, b, f"{path}/{i}")]
    return []
