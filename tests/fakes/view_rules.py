"""What Slack refuses in a modal and in input elements beyond what slack-sdk's models check.

Sources: docs.slack.dev/reference/views/modal-views, /reference/block-kit/blocks/input-block, the
element pages under /reference/block-kit/block-elements/, /reference/block-kit/composition-objects/option-object.
- A modal: `title` plain_text of 1-24 characters (required); `close` and `submit` plain_text ≤ 24;
  `submit` required when the modal holds an input block; `callback_id` and `external_id` ≤ 255;
  `private_metadata` ≤ 3,000; 1-100 blocks.
- Every block_id ≤ 255 and unique in its message or view (Slack: duplicate block_id).
- An input block: `label` plain_text ≤ 2,000, `hint` plain_text ≤ 2,000, one `element` of the kinds an
  input block takes (INPUT_ELEMENTS). action_id ≤ 255.
- plain_text_input: `min_length` 0-3,000, `max_length` 1-3,000, min ≤ max; `initial_value` a string.
- number_input: `is_decimal_allowed` required; `initial_value`, `min_value`, `max_value` numbers as
  strings (whole unless decimals are allowed), min ≤ max, the initial value between them.
- Options: static and multi-static selects ≤ 100, radio buttons and checkboxes ≤ 10; an option's text
  ≤ 75, value ≤ 150, description ≤ 75; an initial option (or each of the initial options) must be one of
  the element's options.
Each problem is a short string ending with Slack's `[json-pointer:…]`.
"""
from __future__ import annotations

from decimal import Decimal, InvalidOperation

TITLE_LIMIT = 24
LABEL_LIMIT = 2_000
ID_LIMIT = 255
METADATA_LIMIT = 3_000
TEXT_INPUT_LIMIT = 3_000
OPTION_LIMITS = {"static_select": 100, "multi_static_select": 100, "radio_buttons": 10, "checkboxes": 10}
INPUT_ELEMENTS = {
    "checkboxes", "datepicker", "datetimepicker", "email_text_input", "file_input", "multi_static_select",
    "multi_external_select", "multi_users_select", "multi_conversations_select", "multi_channels_select",
    "number_input", "plain_text_input", "radio_buttons", "rich_text_input", "static_select", "external_select",
    "users_select", "conversations_select", "channels_select", "timepicker", "url_text_input",
}


def modal_problems(view: dict) -> list[str]:
    problems = []
    for key, required in (("title", True), ("close", False), ("submit", False)):
        problems += _plain_text(view.get(key), f"/view/{key}", TITLE_LIMIT, required)
    blocks = view.get("blocks") if isinstance(view.get("blocks"), list) else []
    if any(isinstance(b, dict) and b.get("type") == "input" for b in blocks) and not view.get("submit"):
        problems.append("a modal with input blocks needs submit [json-pointer:/view/submit]")
    for key, limit in (("callback_id", ID_LIMIT), ("external_id", ID_LIMIT), ("private_metadata", METADATA_LIMIT)):
        if key in view and not (isinstance(view[key], str) and len(view[key]) <= limit):
            problems.append(f"{key} must be a string of at most {limit:,} characters [json-pointer:/view/{key}]")
    return problems


def block_ids_problems(blocks: list, pointer: str) -> list[str]:
    problems, seen = [], set()
    for i, block in enumerate(blocks):
        block_id = block.get("block_id") if isinstance(block, dict) else None
        if block_id is None:
            continue
        if not isinstance(block_id, str) or not 0 < len(block_id) <= ID_LIMIT:
            problems.append(f"block_id must be 1-{ID_LIMIT} characters [json-pointer:{pointer}/{i}/block_id]")
        elif block_id in seen:
            problems.append(f"duplicate block_id {block_id!r} [json-pointer:{pointer}/{i}/block_id]")
        seen.add(block_id)
    return problems


def input_problems(blocks: list, pointer: str) -> list[str]:
    """Input blocks, and the options and limits of the elements anywhere in the blocks."""
    problems = []
    for i, block in enumerate(blocks):
        if not isinstance(block, dict):
            continue
        where = f"{pointer}/{i}"
        if block.get("type") == "input":
            problems += _plain_text(block.get("label"), f"{where}/label", LABEL_LIMIT, True)
            problems += _plain_text(block.get("hint"), f"{where}/hint", LABEL_LIMIT, False)
            element = block.get("element")
            if not isinstance(element, dict) or element.get("type") not in INPUT_ELEMENTS:
                problems.append(f"an input block takes one input element [json-pointer:{where}/element]")
        for element, at in elements_of(block, where):
            problems += element_problems(element, at)
    return problems


def elements_of(block: dict, where: str):
    """(element, pointer) for the interactive elements of a block."""
    if isinstance(block.get("element"), dict):
        yield block["element"], f"{where}/element"
    if isinstance(block.get("accessory"), dict):
        yield block["accessory"], f"{where}/accessory"
    if block.get("type") == "actions" and isinstance(block.get("elements"), list):
        for j, element in enumerate(block["elements"]):
            if isinstance(element, dict):
                yield element, f"{where}/elements/{j}"


def element_problems(element: dict, at: str) -> list[str]:
    kind = element.get("type")
    problems = []
    action_id = element.get("action_id")
    if action_id is not None and not (isinstance(action_id, str) and 0 < len(action_id) <= ID_LIMIT):
        problems.append(f"action_id must be 1-{ID_LIMIT} characters [json-pointer:{at}/action_id]")
    if kind == "plain_text_input":
        problems += _text_input_problems(element, at)
    elif kind == "number_input":
        problems += _number_input_problems(element, at)
    elif kind in OPTION_LIMITS:
        problems += _options_problems(element, at, OPTION_LIMITS[kind])
    return problems


def _text_input_problems(element: dict, at: str) -> list[str]:
    problems = []
    low, high = element.get("min_length"), element.get("max_length")
    for key, value, floor in (("min_length", low, 0), ("max_length", high, 1)):
        if value is not None and not (type(value) is int and floor <= value <= TEXT_INPUT_LIMIT):
            problems.append(f"{key} must be a whole number from {floor} to {TEXT_INPUT_LIMIT:,} [json-pointer:{at}/{key}]")
    if type(low) is int and type(high) is int and low > high:
        problems.append(f"min_length is over max_length [json-pointer:{at}/min_length]")
    if "initial_value" in element and not isinstance(element["initial_value"], str):
        problems.append(f"initial_value must be a string [json-pointer:{at}/initial_value]")
    return problems


def _number_input_problems(element: dict, at: str) -> list[str]:
    if not isinstance(element.get("is_decimal_allowed"), bool):
        return [f"number_input needs is_decimal_allowed [json-pointer:{at}/is_decimal_allowed]"]
    values, problems = {}, []
    for key in ("initial_value", "min_value", "max_value"):
        if key not in element:
            continue
        number = _number(element[key])
        if number is None or (not element["is_decimal_allowed"] and number != number.to_integral_value()):
            problems.append(f"{key} must be a {'decimal' if element['is_decimal_allowed'] else 'whole'} number "
                            f"as a string [json-pointer:{at}/{key}]")
        else:
            values[key] = number
    low, high, initial = values.get("min_value"), values.get("max_value"), values.get("initial_value")
    if low is not None and high is not None and low > high:
        problems.append(f"min_value is over max_value [json-pointer:{at}/min_value]")
    if initial is not None and ((low is not None and initial < low) or (high is not None and initial > high)):
        problems.append(f"initial_value is outside min_value..max_value [json-pointer:{at}/initial_value]")
    return problems


def _options_problems(element: dict, at: str, limit: int) -> list[str]:
    options = all_options(element)
    problems = [f"{len(options)} options, over {limit} [json-pointer:{at}/options]"] if len(options) > limit else []
    for j, option in enumerate(options):
        problems += _option_problems(option, f"{at}/options/{j}")
    chosen = ([element["initial_option"]] if "initial_option" in element else []) + list(element.get("initial_options") or [])
    for option in chosen:
        if not any(same_option(option, o) for o in options):
            problems.append(f"an initial option must be one of the options [json-pointer:{at}]")
    return problems


def _option_problems(option, at: str) -> list[str]:
    if not isinstance(option, dict) or not isinstance(option.get("text"), dict):
        return [f"an option needs text and value [json-pointer:{at}]"]
    problems = []
    for key, value, limit in (("text", option["text"].get("text"), 75), ("value", option.get("value"), 150),
                              ("description", (option.get("description") or {}).get("text"), 75)):
        if value is None and key == "description":
            continue
        if not isinstance(value, str) or not 0 < len(value) <= limit:
            problems.append(f"option {key} must be 1-{limit} characters [json-pointer:{at}/{key}]")
    return problems


def all_options(element: dict) -> list:
    options = list(element.get("options") or [])
    for group in element.get("option_groups") or []:
        options += list(group.get("options") or []) if isinstance(group, dict) else []
    return options


def same_option(a, b) -> bool:
    return (isinstance(a, dict) and isinstance(b, dict) and a.get("value") == b.get("value")
            and (a.get("text") or {}).get("text") == (b.get("text") or {}).get("text"))


def _plain_text(text, at: str, limit: int, required: bool) -> list[str]:
    if text is None:
        return [f"required [json-pointer:{at}]"] if required else []
    if not isinstance(text, dict) or text.get("type") != "plain_text":
        return [f"must be a plain_text object [json-pointer:{at}]"]
    if not isinstance(text.get("text"), str) or not 0 < len(text["text"]) <= limit:
        return [f"text must be 1-{limit:,} characters [json-pointer:{at}/text]"]
    return []


def _number(value) -> Decimal | None:
    if not isinstance(value, str):
        return None
    try:
        number = Decimal(value)
    except InvalidOperation:
        return None
    return number if number.is_finite() else None
