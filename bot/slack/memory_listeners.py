"""Bolt listeners for memory: the note's Undo and Keep, and `/threadfork memory`'s Edit, Delete and edit form.

Each button's value is an entry id; the modal's channel is in its private_metadata. Deleting refreshes the
list in place (views.update); an edit refused comes back inside its modal (`response_action: errors`).
"""
from __future__ import annotations

import json

from slack_bolt import App

from ..domain.text import row_id
from ..services.catalog import Services
from ..services.ports import Audience
from . import memory_view
from .intake import delivered, presser
from .render import REMEMBER_ACTION
from .settings_view import submitted_channel

ERROR_LIMIT = 150  # characters Slack shows under an input


def register_memory(app: App, services: Services) -> None:
    def on_entry(decide):
        """Undo or Keep under a "remembered" note: the entry's id is the button's value."""
        def handler(ack, body, action, context):
            ack()
            with delivered(services, context):
                entry = row_id(action.get("value"))
                if entry is not None:
                    decide(entry, presser(body, context), _message_ts(body))
        return handler

    app.action(memory_view.UNDO_ACTION)(on_entry(services.remembering.undo))
    app.action(memory_view.KEEP_ACTION)(on_entry(services.remembering.keep))

    @app.action(REMEMBER_ACTION)
    def on_remember(ack, body, action, context):
        ack()
        with delivered(services, context):
            fork, text = _conclusion(action.get("value"))
            if fork is not None and text:
                services.remembering.from_merge(fork, text, presser(body, context))

    @app.action(memory_view.DELETE_ACTION)
    def on_delete(ack, body, action, context):
        ack()
        with delivered(services, context):
            entry, audience = row_id(action.get("value")), _in_modal(body, context)
            if entry is not None and audience is not None:
                services.remembering.delete(entry, audience, (body.get("view") or {}).get("id"))

    @app.action(memory_view.EDIT_ACTION)
    def on_edit(ack, body, action, context):
        ack()
        with delivered(services, context):
            entry, audience = row_id(action.get("value")), _in_modal(body, context)
            if entry is not None and audience is not None:
                services.remembering.edit_form(entry, audience, body.get("trigger_id") or "")

    @app.view(memory_view.MEMORY_EDIT_VIEW)
    def on_edited(ack, body, view, context):
        entry, text = memory_view.edited_entry(view)
        audience = _in_modal(body, context)
        if entry is None or audience is None:
            ack()
            return
        with delivered(services, context):
            refused = services.remembering.edit(entry, audience, text, view.get("root_view_id"))
            if refused:
                ack(response_action="errors", errors={"text": refused[:ERROR_LIMIT]})
            else:
                ack()


def _in_modal(body: dict, context) -> Audience | None:
    """Who acts in a memory modal, and on which channel's memory (the modal's private_metadata)."""
    channel = submitted_channel(body.get("view") or {})
    return Audience(context.team_id or "", channel, body["user"]["id"]) if channel else None


def _conclusion(value) -> tuple[int | None, str]:
    """A Remember button's fork id and conclusion (render.remember_blocks)."""
    try:
        given = json.loads(value or "")
        return row_id(given.get("f")), str(given.get("t") or "")
    except (ValueError, AttributeError):
        return None, ""


def _message_ts(body: dict) -> str | None:
    return (body.get("container") or {}).get("message_ts") or (body.get("message") or {}).get("ts")
