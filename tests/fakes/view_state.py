"""A view's state as Slack keeps it: ids filled in, values keyed by block_id then action_id, and what a
person can submit.

Invariants (docs.slack.dev/reference/interaction-payloads/view-interactions-payload and the
2020-09 "full state" change):
- Slack gives every block without a block_id, and every interactive element without an action_id,
  an id of its own; the view it returns and every payload about it carry those ids.
- `state.values[block_id][action_id]` holds every stateful element of the view (input blocks, and
  selects, pickers, checkboxes and radio buttons in sections and actions), with its type and its value
  in that type's shape (VALUE_KEYS); an untouched element holds its initial value (null or [] if none).
- A person cannot submit what Slack's client refuses: a required input left empty, text outside
  min_length..max_length, a number that is not one or is out of range, an option the element does not
  offer. `submitted_state` raises NotSubmittable for those instead of building a payload.
"""
from __future__ import annotations

import base64
import copy
import hashlib
from decimal import Decimal, InvalidOperation

from .view_rules import all_options, elements_of, same_option

# element type -> (the key its value travels under, whether it holds a list)
VALUE_KEYS = {
    "plain_text_input": ("value", False), "email_text_input": ("value", False), "url_text_input": ("value", False),
    "number_input": ("value", False), "rich_text_input": ("rich_text_value", False),
    "static_select": ("selected_option", False), "external_select": ("selected_option", False),
    "radio_buttons": ("selected_option", False),
    "multi_static_select": ("selected_options", True), "multi_external_select": ("selected_options", True),
    "checkboxes": ("selected_options", True),
    "users_select": ("selected_user", False), "multi_users_select": ("selected_users", True),
    "conversations_select": ("selected_conversation", False),
    "multi_conversations_select": ("selected_conversations", True),
    "channels_select": ("selected_channel", False), "multi_channels_select": ("selected_channels", True),
    "datepicker": ("selected_date", False), "timepicker": ("selected_time", False),
    "datetimepicker": ("selected_date_time", False), "file_input": ("files", True),
}
INITIAL_KEYS = {
    "value": "initial_value", "rich_text_value": "initial_value", "selected_option": "initial_option",
    "selected_options": "initial_options", "selected_user": "initial_user", "selected_users": "initial_users",
    "selected_conversation": "initial_conversation", "selected_conversations": "initial_conversations",
    "selected_channel": "initial_channel", "selected_channels": "initial_channels",
    "selected_date": "initial_date", "selected_time": "initial_time", "selected_date_time": "initial_date_time",
}
OPTION_KINDS = {"static_select", "radio_buttons", "multi_static_select", "checkboxes"}


class NotSubmittable(AssertionError):
    """Slack's client would not let the person submit this (the test asked for the impossible)."""


def with_ids(blocks: list, seed: str) -> list:
    """The blocks as Slack stores them: every block a block_id, every interactive element an action_id."""
    filled = copy.deepcopy(blocks)
    for i, block in enumerate(filled):
        block.setdefault("block_id", _made_up_id(f"{seed}/{i}"))
        for j, (element, _) in enumerate(elements_of(block, "")):
            if element.get("type") not in ("image",):
                element.setdefault("action_id", _made_up_id(f"{seed}/{i}/{j}"))
    return filled


def initial_state(blocks: list) -> dict:
    """{"values": {block_id: {action_id: {"type": …, <value key>: initial value}}}}."""
    values: dict = {}
    for block in blocks:
        for element, _ in elements_of(block, ""):
            if element.get("type") in VALUE_KEYS:
                key, many = VALUE_KEYS[element["type"]]
                initial = element.get(INITIAL_KEYS.get(key, ""))
                value = list(initial or []) if many else initial
                values.setdefault(block["block_id"], {})[element["action_id"]] = {"type": element["type"], key: value}
    return {"values": values}


def submitted_state(blocks: list, state: dict, values: dict) -> dict:
    """The state after a person set `values` ({block_id or action_id: value}; options by their value)."""
    state = copy.deepcopy(state)
    places = {}
    for block in blocks:
        for element, _ in elements_of(block, ""):
            if element.get("type") in VALUE_KEYS:
                place = (block, element)
                places.setdefault(block["block_id"], []).append(place)
                places.setdefault(element["action_id"], []).append(place)
    for name, value in values.items():
        found = places.get(name, [])
        if len(found) != 1:
            raise NotSubmittable(f"{name!r} names {len(found)} inputs of the view, not one")
        block, element = found[0]
        key, _ = VALUE_KEYS[element["type"]]
        state["values"][block["block_id"]][element["action_id"]][key] = _typed(element, value, name)
    for block in blocks:
        if block.get("type") == "input" and not block.get("optional"):
            element = block["element"]
            entry = state["values"].get(block["block_id"], {}).get(element["action_id"], {})
            if entry.get(VALUE_KEYS.get(element["type"], ("value",))[0]) in (None, "", []):
                raise NotSubmittable(f"the required input {block['block_id']!r} is empty")
    return state


def _typed(element: dict, value, name: str):
    kind = element["type"]
    key, many = VALUE_KEYS[kind]
    if value is None or value == []:
        return [] if many else None
    if kind in OPTION_KINDS:
        chosen = [_option(element, v, name) for v in (value if many else [value])]
        return chosen if many else chosen[0]
    if kind == "plain_text_input":
        text = str(value)
        low, high = element.get("min_length", 0), element.get("max_length", 3_000)
        if not low <= len(text) <= high:
            raise NotSubmittable(f"{name!r}: {len(text)} characters, outside {low}..{high}")
        return text
    if kind == "number_input":
        return _number(element, value, name)
    if many and not isinstance(value, (list, tuple)):
        raise NotSubmittable(f"{name!r} takes a list")
    return list(value) if many else value


def _option(element: dict, value, name: str) -> dict:
    wanted = value.get("value") if isinstance(value, dict) else value
    for option in all_options(element):
        if option.get("value") == wanted and (not isinstance(value, dict) or same_option(option, value)):
            return option
    raise NotSubmittable(f"{name!r} offers no option {wanted!r}")


def _number(element: dict, value, name: str) -> str:
    try:
        number = Decimal(str(value))
    except InvalidOperation:
        raise NotSubmittable(f"{name!r}: {value!r} is not a number") from None
    if not element.get("is_decimal_allowed") and number != number.to_integral_value():
        raise NotSubmittable(f"{name!r}: {value!r} is not a whole number")
    low, high = element.get("min_value"), element.get("max_value")
    if (low is not None and number < Decimal(low)) or (high is not None and number > Decimal(high)):
        raise NotSubmittable(f"{name!r}: {value!r} is outside {low}..{high}")
    return str(value)


def _made_up_id(seed: str) -> str:
    return base64.b64encode(hashlib.sha256(seed.encode()).digest()).decode()[:4]
