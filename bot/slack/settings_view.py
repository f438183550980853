"""Pure rendering of `/threadfork`: the channel settings modal (its inputs show the values in effect,
and say the environment's default), the reading of a submitted one, and the question that confirms
forgetting a channel.

Each input block's block_id is the setting's name (a connector's: `connector_<slot>_<field>`), so
Slack's `response_action: errors` shows a refusal under the input it is about.
"""
from __future__ import annotations

import json

from ..domain.settings import INSTRUCTIONS_LIMIT, ChannelSettings, Choices, FormValue, form_value, offered_models, shown
from ..domain.connectors import MAX_CONNECTORS, Connector, block_id
from ..domain.text import is_slack_id
from .render import plain, section

SETTINGS_VIEW = "threadfork_settings"  # the modal's callback_id
FORGET_ACTION = "threadfork_forget"
KEEP_ACTION = "threadfork_forget_cancel"
ELEMENT = "value"  # every input's action_id
SWITCH = ("on", "off")
SECTION_TEXT = 3_000  # characters of a section's text


def settings_view(channel_id: str, effective: ChannelSettings, defaults: ChannelSettings, choices: Choices,
                  with_token: frozenset[str] = frozenset()) -> dict:
    blocks = [
        section(f"Threadfork's settings for <#{channel_id}>. They apply from the channel's next message; the "
                 "environment's defaults apply where you keep them."),
        _input("instructions", "Instructions for Claude", {
            "type": "plain_text_input", "multiline": True, "max_length": INSTRUCTIONS_LIMIT,
            **({"initial_value": effective.instructions} if effective.instructions else {}),
            "placeholder": plain("e.g. Answer tersely. Our stack is Go and PostgreSQL.")},
            "Added to Claude's system prompt, after Threadfork's own. A fork keeps the instructions it was "
            "opened with.", optional=True),
        _input("model", "Model", _select([(m, m) for m in offered_models(choices, effective.model)], effective.model),
               _default("model", defaults)),
        _input("effort", "Effort", _select([("default", "The API's default"), ("low", "Low — fastest, cheapest"),
                                            ("medium", "Medium"), ("high", "High — thinks longest")],
                                           effective.effort or "default"),
               "How much Claude thinks before answering: lower effort answers sooner and costs less. "
               + _default("effort", defaults)),
        _input("fork_token_budget", "Fork token budget", _text(
            form_value("fork_token_budget", effective.fork_token_budget), "e.g. 200000 — empty: none"),
               "Tokens a fork may burn before it asks to merge, abandon or continue. " + _default(
                   "fork_token_budget", defaults), optional=True),
        _input("monthly_spend_cap_usd", "Monthly spend cap (USD)", _text(
            form_value("monthly_spend_cap_usd", effective.monthly_spend_cap_usd), "e.g. 50 — empty: no cap"),
               "Estimated from the usage Claude's API reports. At the cap, new questions and forks here wait until "
               "the cap is raised or the month (UTC) ends; merges and abandons go on. " + _default(
                   "monthly_spend_cap_usd", defaults), optional=True),
        _input("merge_policy", "Who may merge or abandon a fork",
               _select([("anyone", "Anyone in the channel"), ("owner", "Only whoever opened it")],
                       effective.merge_policy), _default("merge_policy", defaults)),
        _input("merge_review", "Review summaries before they merge", _switch(effective.merge_review),
               _default("merge_review", defaults)),
        _input("idle_reminder", "Remind an idle fork after", _text(form_value("idle_reminder", effective.idle_reminder),
                                                                    "e.g. 24h"), _default("idle_reminder", defaults)),
        _input("expiry", "Close an idle fork after", _text(form_value("expiry", effective.expiry), "e.g. 7d"),
               _default("expiry", defaults)),
        _input("tools", "Web research", _tools(choices.tools, effective.tools), _default("tools", defaults),
               optional=True),
        _input("memory_budget", "Memory budget (tokens)", _text(
            form_value("memory_budget", effective.memory_budget), "e.g. 2000 — empty: none"),
               "How much this channel's memory may hold: every request here carries it. See `/threadfork memory`. "
               + _default("memory_budget", defaults), optional=True),
        _input("memory_writers", "Who may change the channel's memory",
               _select([("anyone", "Anyone in the channel"), ("admins", "Only admins")], effective.memory_writers),
               _default("memory_writers", defaults)),
        _input("memory_tool", "Claude remembers on its own",
               _select([("off", "Off"), ("ask", "Ask first — each entry kept or undone"), ("on", "On")],
                       effective.memory_tool), "Claude's memory tool: it may add to this channel's memory, and "
               "each entry shows a note here. " + _default("memory_tool", defaults)),
        _input("enabled", "Threadfork in this channel", _switch(effective.enabled),
               "Off: Threadfork answers nobody here (this command still works)."),
        *connector_blocks(effective.connectors or (), with_token),
    ]
    return {"type": "modal", "callback_id": SETTINGS_VIEW, "title": plain("Threadfork settings"),
            "submit": plain("Save"), "close": plain("Cancel"),
            "private_metadata": json.dumps({"channel": channel_id}), "blocks": blocks}


def connector_blocks(connectors: tuple[Connector, ...], with_token: frozenset[str]) -> list[dict]:
    """The connectors section: one group of inputs per connector, and an empty one to add a connector
    (block ids `connector_<slot>_<field>`). Emptying a name and URL removes that connector; a token is
    never shown, only said to be set."""
    blocks = [{"type": "header", "block_id": "connectors", "text": plain("Connectors")},
              section("Remote MCP servers Claude may call while answering here (over HTTPS, reachable from the "
                      "internet). A fork keeps the connectors it opened with.")]
    slots = list(connectors) + ([None] if len(connectors) < MAX_CONNECTORS else [])
    for i, connector in enumerate(slots):
        title = f"Connector “{connector.name}”" if connector else "Add a connector"
        blocks += [
            {"type": "context", "block_id": block_id(i, "title"), "elements": [{"type": "mrkdwn", "text": f"*{title}*"}]},
            _input(block_id(i, "name"), "Name", _text(connector.name if connector else None, "e.g. tracker"),
                   "Letters, digits, - and _; unique in this channel. Empty name and URL: removed.", optional=True),
            _input(block_id(i, "url"), "Server URL", _text(connector.url if connector else None,
                                                            "https://mcp.example.com/mcp"),
                   "https:// only, a public host.", optional=True),
            _input(block_id(i, "token"), "Bearer token", _text(None, "token set — leave empty to keep it"
                                                              if connector and connector.name in with_token else
                                                              "optional"),
                   "Token set — leave empty to keep it." if connector and connector.name in with_token else
                   "Sent as the server's authorization token; kept encrypted, never shown again.", optional=True),
            _input(block_id(i, "tools"), "Allowed tools", _text(", ".join(connector.allowed_tools)
                                                                 if connector and connector.allowed_tools else None,
                                                                 "e.g. search, get_issue — empty: all"),
                   "Comma list of the server's tools Claude may call; empty: all of them.", optional=True),
        ]
    return blocks


def saved_view(notes: tuple[str, ...]) -> dict:
    """What the modal turns into after a save that has something to say (a token it did not keep)."""
    return {"type": "modal", "callback_id": f"{SETTINGS_VIEW}_saved", "title": plain("Threadfork settings"),
            "close": plain("Done"), "blocks": [section("✅ Saved.")] + [section(note[:SECTION_TEXT]) for note in notes]}


def submitted_channel(view: dict) -> str | None:
    try:
        channel = json.loads(view.get("private_metadata") or "")["channel"]
    except (ValueError, KeyError, TypeError):
        return None
    return channel if is_slack_id(channel) else None


def form_values(view: dict) -> dict[str, FormValue]:
    """Each input's value by block_id: a text's (None when empty), a select's option, a checkbox list's."""
    values = {}
    for block_id, elements in ((view.get("state") or {}).get("values") or {}).items():
        element = next(iter(elements.values()), None) if isinstance(elements, dict) else None
        if not isinstance(element, dict):
            continue
        if "selected_options" in element:
            values[block_id] = [o.get("value") or "" for o in element.get("selected_options") or []]
        elif "selected_option" in element:
            values[block_id] = (element.get("selected_option") or {}).get("value")
        else:
            values[block_id] = element.get("value")
    return values


def forget_question(answer: str) -> tuple[str, list[dict]]:
    text = ("🧹 Make Threadfork forget this channel? Its conversation, every fork, turn and summary stored for it "
            "are deleted for good; the channel's settings stay. Messages already posted in Slack stay too.")
    return text, [section(text), {"type": "actions", "block_id": "forget", "elements": [
        {"type": "button", "text": plain("Forget everything"), "action_id": FORGET_ACTION, "value": answer,
         "style": "danger", "confirm": {"title": plain("Forget this channel?"), "text": plain(
             "This deletes Threadfork's memory of this channel. It cannot be undone."),
             "confirm": plain("Forget"), "deny": plain("Keep it"), "style": "danger"}},
        {"type": "button", "text": plain("Keep it"), "action_id": KEEP_ACTION, "value": "keep"}]}]


def _default(name: str, defaults: ChannelSettings) -> str:
    return f"Default: {shown(name, getattr(defaults, name))}."


def _input(block_id: str, label: str, element: dict, hint: str, optional: bool = False) -> dict:
    block = {"type": "input", "block_id": block_id, "label": plain(label), "element": {**element,
                                                                                        "action_id": ELEMENT},
             "hint": plain(hint[:2000])}
    return {**block, "optional": True} if optional else block


def _text(initial: str | None, placeholder: str) -> dict:
    element = {"type": "plain_text_input", "placeholder": plain(placeholder)}
    return {**element, "initial_value": initial} if initial else element


def _select(options: list[tuple[str, str]], current: str | None) -> dict:
    made = [_option(value, label) for value, label in options]
    chosen = next((o for o in made if o["value"] == current), None)
    return {"type": "static_select", "options": made, **({"initial_option": chosen} if chosen else {})}


def _switch(on: bool | None) -> dict:
    return _select([("on", "On"), ("off", "Off")], "on" if on else "off")


def _tools(names: tuple[str, ...], chosen: tuple[str, ...] | None) -> dict:
    labels = {"web_search": "Web search", "web_fetch": "Fetch web pages"}
    options = [_option(name, labels.get(name, name)) for name in names]
    initial = [o for o in options if o["value"] in (chosen or ())]
    return {"type": "checkboxes", "options": options, **({"initial_options": initial} if initial else {})}


def _option(value: str, label: str) -> dict:
    return {"text": plain(label[:75]), "value": value}
