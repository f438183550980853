"""`/threadfork`: a channel's own settings (a modal) and forgetting its conversations, for admins.

Settings are kept as what differs from the environment's defaults, so a default changed later still
applies where nobody chose otherwise; a save takes effect at the channel's next turn and says in the
channel who changed what. `/threadfork forget` asks first (a button), then really deletes the
channel's sessions, forks, turns and summaries; its settings stay.
"""
from __future__ import annotations

import logging
import re
import uuid
from datetime import timezone

from dataclasses import replace

from ..domain.connectors import NO_KEY, ConnectorForm, block_id, read_connectors, submitted_rows
from ..domain.errors import NoSecretKey, ThreadforkError
from ..domain.model import Channel
from ..domain.settings import ChannelSettings, Choices, FormValue, changes, read_form
from .access import NOT_ADMIN, Access
from .commands import SlashCommand
from .model_inputs import Connections
from .ports import (Audience, ChannelSettingsStore, Claims, Clock, ConnectorTokens, Erasure, Place, PrivateAnswers,
                    Replies, Screens)
from .remembering import Remembering

log = logging.getLogger(__name__)

ANSWER = re.compile(r"[0-9]{1,12}:[0-9a-f]{16}")  # a question's answer as `ask_to_forget` makes it
QUESTION_LIFETIME = 15 * 60.0  # seconds a "Forget everything" button stays good for
USAGE = ("`/threadfork` (or `/threadfork settings`) opens this channel's settings; `/threadfork memory` shows this "
         "channel's memory, to edit or delete; `/threadfork forget` deletes everything Threadfork stored for this "
         "channel (admins only; it asks first).")


class ChannelAdmin:
    def __init__(self, replies: Replies, answers: PrivateAnswers, screens: Screens, access: Access,
                 defaults: ChannelSettings, choices: Choices, connections: Connections,
                 remembering: Remembering | None = None,
                 *, claims: Claims, channel_settings: ChannelSettingsStore, connector_tokens: ConnectorTokens,
                 erasure: Erasure, clock: Clock):
        self.remembering = remembering  # `/threadfork memory`
        self.claims = claims
        self.channel_settings = channel_settings
        self.connector_tokens = connector_tokens
        self.erasure = erasure
        self.clock = clock
        self.replies = replies
        self.answers = answers
        self.screens = screens
        self.access = access
        self.defaults = defaults  # the environment's, as a channel's settings
        self.choices = choices
        self.connections = connections

    def command(self, command: SlashCommand) -> None:
        verb = command.text.strip().lower()
        try:
            if verb in ("", "settings"):
                self.open_settings(command)
            elif verb == "forget":
                self.ask_to_forget(command)
            elif verb == "memory" and self.remembering is not None:
                self.remembering.open(command.team_id, command.channel, command.user_id, command.trigger_id or "")
            else:
                self.answers.tell(command.audience, USAGE)
        except ThreadforkError as error:  # Slack would not say who they are, or open the modal
            self.answers.tell(command.audience, str(error))

    def effective(self, channel: Channel) -> ChannelSettings:
        return self.channel_settings.of(channel).over(self.defaults)

    def open_settings(self, command: SlashCommand) -> None:
        if not self.access.is_admin(command.team_id, command.user_id):
            self.answers.tell(command.audience, NOT_ADMIN.format(verb="change Threadfork's settings"))
            return
        effective = self.effective(command.channel)
        self.screens.open_settings(command.team_id, command.trigger_id or "", command.channel_id, effective,
                                   self.defaults, self.choices, self._with_token(command.channel, effective))

    def save(self, channel: Channel, user_id: str, values: dict[str, FormValue]) -> Outcome:
        """A submitted settings modal: what it got wrong, keyed by block_id (then nothing is saved); a save
        that dropped a token (its connector's URL or name changed) says so in the outcome's `notes`."""
        try:
            admin = self.access.is_admin(channel.team_id, user_id)
        except ThreadforkError as error:  # Slack would not say who they are: shown in the modal, kept open
            return Outcome({"instructions": f"Nothing was saved: {error}"})
        if not admin:
            return Outcome({"instructions": NOT_ADMIN.format(verb="change Threadfork's settings")})
        before = self.effective(channel)
        after, errors = read_form(values, before, self.choices)
        rows = submitted_rows(values, before.connectors or ())
        form, problems = read_connectors(rows, block_id) if rows is not None else (None, {})
        errors.update(problems)
        if errors:
            return Outcome(errors)
        saved = after.beyond(self.defaults)
        if form is not None:
            try:
                sealed = self._sealed(channel, form)
            except NoSecretKey as error:
                return Outcome({block_id(next(r.index for r in rows if r.token.strip()), "token"): str(error)})
            after = replace(after, connectors=form.connectors)
            saved = after.beyond(self.defaults)
            if sealed:  # the channel's own tokens belong to its own connectors, even ones equal to the defaults
                saved = replace(saved, connectors=form.connectors)
        outcome = Outcome(notes=self._dropped(channel, form, sealed) if form is not None else ())
        self.channel_settings.save(channel, saved, user_id)
        if form is not None:
            self.connector_tokens.keep(channel, sealed if saved.connectors is not None else {})
        changed = changes(before, after)
        if changed:
            try:
                self.replies.post_notice(Place(channel.id, None, channel.team_id, None),
                                         f"⚙️ <@{user_id}> changed Threadfork's settings in this channel: "
                                         f"{'; '.join(changed)}. They apply from the next message.")
            except ThreadforkError:
                log.warning("the settings of %s were saved; their notice could not be posted", channel.id)
        return outcome

    def _dropped(self, channel: Channel, form: ConnectorForm, sealed: dict[str, str]) -> tuple[str, ...]:
        """What to say of each connector that had a token and lost it to a new URL or name (`sealed`: the
        tokens this save keeps; read before it keeps them)."""
        had = self._with_token(channel, ChannelSettings(connectors=tuple(was for _, was in form.moved)))
        return tuple(f"The connector “{name}” was saved without a token: its "
                     f"{'URL' if was.name == name else 'name'} changed, and a token goes only where it was given for. "
                     "Type the token again in `/threadfork` if this server needs one."
                     for name, was in form.moved if was.name in had and name not in sealed)

    def _sealed(self, channel: Channel, form: ConnectorForm) -> dict[str, str]:
        """The tokens the submitted connectors keep, sealed: typed now, or kept from the connector their
        slot showed (raises NoSecretKey for a typed token without THREADFORK_SECRET_KEY)."""
        before = self.connector_tokens.sealed(channel)
        sealed = {}
        for connector in form.connectors:
            if connector.name in form.new_tokens:
                if self.connections.secrets is None:
                    raise NoSecretKey(NO_KEY)
                sealed[connector.name] = self.connections.secrets.seal(form.new_tokens[connector.name])
            elif form.kept_from.get(connector.name) in before:
                sealed[connector.name] = before[form.kept_from[connector.name]]
        return sealed

    def _with_token(self, channel: Channel, effective: ChannelSettings) -> frozenset[str]:
        """The shown connectors that have a token (the modal says so, and never shows it)."""
        own = self.connector_tokens.sealed(channel)
        return frozenset(c.name for c in effective.connectors or ()
                         if c.name in own or self.connections.has_default_token(c))

    def ask_to_forget(self, command: SlashCommand) -> None:
        if not self.access.is_admin(command.team_id, command.user_id):
            self.answers.tell(command.audience, NOT_ADMIN.format(verb="make Threadfork forget a channel"))
            return
        answer = f"{int(self._now())}:{uuid.uuid4().hex[:16]}"
        self.claims.claim(_asked(command.channel, answer))  # the question as issued: a made-up answer is none
        self.answers.ask_to_forget(command.audience, answer)

    def forget(self, channel: Channel, user_id: str, audience: Audience, answer: str) -> None:
        """The confirmation button (`answer`: the question's one-time value): every session, fork, turn and
        summary of the channel, deleted — once per question, and only within QUESTION_LIFETIME."""
        try:
            self._forget(channel, user_id, audience, answer)
        except ThreadforkError as error:
            self.answers.tell(audience, str(error))

    def _forget(self, channel: Channel, user_id: str, audience: Audience, answer: str) -> None:
        if not self.access.is_admin(channel.team_id, user_id):
            self.answers.tell(audience, NOT_ADMIN.format(verb="make Threadfork forget a channel"))
            return
        if not self._fresh(answer) or self.claims.claim(_asked(channel, answer)):
            # too old, or never asked here (the claim was free: no question of ours carried this answer)
            self.answers.settle_question(audience, "That question has expired — nothing was deleted. Run "
                                                   "`/threadfork forget` again.")
            return
        if not self.claims.mark(f"forget:{channel.team_id}:{channel.id}:{answer}"):
            self.answers.settle_question(audience, "This question was already answered.")
            return
        deleted = self.erasure.forget_channel(channel)
        sessions = f"{deleted} session{'s' if deleted != 1 else ''}"
        self.answers.settle_question(audience, f"🧹 Done: Threadfork forgot this channel ({sessions} deleted).")
        self.replies.post_notice(Place(channel.id, None, channel.team_id, None),
                                 f"🧹 <@{user_id}> made Threadfork forget this channel: its conversation, forks and "
                                 f"summaries are deleted ({sessions}). The channel's settings stay; the next message "
                                 "starts afresh.")

    def keep(self, audience: Audience) -> None:
        self.answers.settle_question(audience, "Nothing was deleted.")

    def _fresh(self, answer: str) -> bool:
        if not ANSWER.fullmatch(answer):  # not one of ours: never near the store
            return False
        issued, _, _ = answer.partition(":")
        return 0 <= self._now() - int(issued) <= QUESTION_LIFETIME

    def _now(self) -> float:
        """The store's clock (naive UTC) as epoch seconds: what a question's answer carries."""
        return self.clock().replace(tzinfo=timezone.utc).timestamp()


class Outcome(dict):
    """A save's refusals by block_id (a dict: empty when it saved), and `notes` to show after a save."""

    def __init__(self, errors: dict[str, str] | None = None, notes: tuple[str, ...] = ()):
        super().__init__(errors or {})
        self.notes = notes


def _asked(channel: Channel, answer: str) -> str:
    return f"forget-asked:{channel.team_id}:{channel.id}:{answer}"
