"""Bolt listeners for `/threadfork`'s modal and for the button that confirms forgetting a channel.

A submission is checked before it is acknowledged: a refusal comes back inside the modal
(`response_action: errors`, keyed by the input's block_id) and nothing is saved. A save that dropped a
connector's token (its URL or name changed) turns the modal into a note that says so (`update`).
"""
from __future__ import annotations

from slack_bolt import App

from ..domain.model import Channel
from ..services.catalog import Services
from . import settings_view
from .intake import delivered, presser

ERROR_LIMIT = 150  # characters Slack shows under an input


def register_settings(app: App, services: Services) -> None:
    @app.view(settings_view.SETTINGS_VIEW)
    def on_settings(ack, body, view, context):
        channel_id = settings_view.submitted_channel(view)
        if channel_id is None:
            ack()
            return
        with delivered(services, context):
            outcome = services.channel_admin.save(Channel(context.team_id or "", channel_id), body["user"]["id"],
                                                  settings_view.form_values(view))
            if outcome:
                ack(response_action="errors", errors={k: v[:ERROR_LIMIT] for k, v in outcome.items()})
            elif outcome.notes:
                ack(response_action="update", view=settings_view.saved_view(outcome.notes))
            else:
                ack()

    @app.action(settings_view.FORGET_ACTION)
    def on_forget(ack, body, action, context):
        ack()
        audience = presser(body, context)
        with delivered(services, context):
            services.channel_admin.forget(audience.channel, audience.user_id, audience, action.get("value") or "")

    @app.action(settings_view.KEEP_ACTION)
    def on_keep(ack, body, context):
        ack()
        with delivered(services, context):
            services.channel_admin.keep(presser(body, context))
