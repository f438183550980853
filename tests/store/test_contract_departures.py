"""Departed workspaces (memory, SQLite, PostgreSQL): the first departure's time counts, a return
forgets it, and the sweep finds those gone long enough."""
from datetime import timedelta


def test_a_workspace_that_left_is_due_once_its_time_has_passed(store, clock):
    store.departures.depart("T0TEAM002")
    left = clock()
    clock.advance(hours=1)
    store.departures.depart("T0TEAM002")  # app_uninstalled after tokens_revoked: the first time stands
    store.departures.depart("T0TEAM003")
    assert store.departures.departed_before(left - timedelta(seconds=1)) == []
    assert store.departures.departed_before(left) == ["T0TEAM002"]
    assert store.departures.departed_before(clock()) == ["T0TEAM002", "T0TEAM003"]


def test_a_reinstall_clears_the_departure(store, clock):
    store.departures.depart("T0TEAM002")
    store.departures.returned("T0TEAM002")
    store.departures.returned("T0TEAM009")  # never left: nothing to forget
    assert store.departures.departed_before(clock()) == []


def test_a_settled_departure_is_not_due_again(store, clock):
    store.departures.depart("T0TEAM002")
    store.departures.settled("T0TEAM002")
    assert store.departures.departed_before(clock()) == []
