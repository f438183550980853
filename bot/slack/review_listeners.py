"""Bolt listeners for summaries under review: the four buttons on a draft and its two modals.

An edit is checked before its modal is acknowledged, so a refusal (empty text, a draft no longer
live, the merge policy) shows inside the modal with `response_action: errors` and nothing changes;
a redraft closes its modal at once, since Claude takes longer than Slack waits for the answer.
"""
from __future__ import annotations

import logging

from slack_bolt import App

from ..domain.model import Channel
from ..domain.text import storable
from ..services.catalog import Services
from ..services.ports import Audience
from . import drafts
from .intake import delivered, presser

log = logging.getLogger(__name__)

VERBS = {drafts.APPROVE_ACTION: "approve", drafts.EDIT_ACTION: "edit", drafts.REDRAFT_ACTION: "redraft",
         drafts.CANCEL_ACTION: "cancel"}


def register_reviews(app: App, services: Services) -> None:
    for action_id, verb in VERBS.items():
        app.action(action_id)(_button_listener(services, verb))

    @app.view(drafts.EDIT_VIEW)
    def on_edit(ack, body, view, context):
        found = drafts.submitted(view)
        if found is None:
            ack()
            return
        fork_id, number, channel_id = found
        channel, user_id = Channel(context.team_id or "", channel_id), body["user"]["id"]
        text = storable(drafts.edited_text(view))
        refused = services.reviews.edit_refused(fork_id, number, user_id, channel, text)
        if refused:
            ack(response_action="errors", errors={drafts.PART.format(1): refused[:150]})
            return
        ack()
        with delivered(services, context):
            services.reviews.saved_edit(fork_id, number, user_id, _audience(channel, user_id), text)

    @app.view(drafts.REDRAFT_VIEW)
    def on_redraft(ack, body, view, context):
        found = drafts.submitted(view)
        if len(drafts.guidance(view)) > drafts.GUIDANCE_LIMIT:  # Slack caps the box; a forged payload is told too
            ack(response_action="errors", errors={drafts.GUIDANCE: f"Keep what should change under "
                                                                   f"{drafts.GUIDANCE_LIMIT:,} characters."})
            return
        ack()
        if found is None:
            return
        fork_id, number, channel_id = found
        channel, user_id = Channel(context.team_id or "", channel_id), body["user"]["id"]
        with delivered(services, context):
            services.reviews.asked_redraft(fork_id, number, user_id, _audience(channel, user_id),
                                           storable(drafts.guidance(view)))


def _button_listener(services: Services, verb: str):
    def listener(ack, body, action, context):
        ack()
        parsed = drafts.parse_value(action.get("value") or "")
        if parsed is None:
            log.warning("draft button %s with a malformed value ignored", action.get("action_id"))
            return
        audience = presser(body, context)
        with delivered(services, context):
            if not services.access.admits(audience):
                return
            services.reviews.pressed(verb, *parsed, body["user"]["id"], audience, body.get("trigger_id"))

    return listener


def _audience(channel: Channel, user_id: str) -> Audience:
    return Audience(channel.team_id, channel.id, user_id)
