"""Departed workspaces on the in-memory store: the sweep leaves a departure alone until the retention
has passed, and a return forgets it. (The deletion itself is store.erasure.forget_team's, tested
with the Erasure port.)"""
from bot.services.policy import Policy

from .conftest import UseCases


def test_a_departure_within_the_retention_is_left_alone_by_the_sweep():
    cases = UseCases(retention_after_uninstall=30 * 86400.0)
    cases.services.workspaces.departed("T0TEAM002")
    cases.clock.advance(days=29)
    cases.services.sweep()
    assert cases.store.departures.departed_before(cases.clock()) == ["T0TEAM002"]


def test_a_workspace_that_installs_again_is_no_longer_departed():
    cases = UseCases()
    cases.services.workspaces.departed("T0TEAM002")
    cases.services.workspaces.installed("T0TEAM002")
    cases.clock.advance(days=365)
    cases.services.sweep()
    assert cases.store.departures.departed_before(cases.clock()) == []


def test_the_retention_after_uninstall_defaults_to_thirty_days():
    assert Policy().retention_after_uninstall == 30 * 86400.0
