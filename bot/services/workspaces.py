"""Workspaces arriving and leaving (installing into many workspaces).

An uninstall, or the workspace's bot token revoked, is recorded as a departure; installing again
before the retention ends forgets it and the conversations stay. Once a departure is older than
THREADFORK_RETENTION_AFTER_UNINSTALL (0: at the next sweep), the sweep deletes everything stored for
that workspace and settles the departure. Tokens are not handled here: Bolt's install flow and
token revocation listeners keep them in slack-sdk's installation store. With one bot token
(SLACK_BOT_TOKEN) the departure is recorded the same, and a start-up whose token works again for
that workspace counts as its return.
"""
from __future__ import annotations

import logging
from datetime import timedelta

from .ports import Clock, Departures, Erasure

log = logging.getLogger(__name__)


class Workspaces:
    def __init__(self, retention_after_uninstall: float,
                 *, erasure: Erasure, departures: Departures, clock: Clock):
        self.erasure, self.departures, self.clock = erasure, departures, clock
        self.retention = retention_after_uninstall

    def installed(self, team_id: str) -> None:
        self.departures.returned(team_id)

    def departed(self, team_id: str) -> None:
        log.info("workspace %s uninstalled the app; its conversations are kept %ss", team_id, int(self.retention))
        self.departures.depart(team_id)

    def forget_departed(self) -> None:
        """The sweep's step: delete the conversations of workspaces gone longer than the retention."""
        gone_before = self.clock() - timedelta(seconds=self.retention)
        for team_id in self.departures.departed_before(gone_before):
            removed = self.erasure.forget_team(team_id)
            self.departures.settled(team_id)
            log.info("workspace %s left over %ss ago: %s stored rows deleted", team_id, int(self.retention), removed)
