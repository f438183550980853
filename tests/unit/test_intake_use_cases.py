"""The durable inbox's rules on the in-memory store: kept once, replayed when its process died,
given up after three attempts with a notice, pruned after a day."""
from bot.services.ports import MAX_ATTEMPTS

from .conftest import UseCases


class RecordingDeliveries:
    def __init__(self, cases: UseCases, fail: bool = False):
        self.cases, self.fail = cases, fail
        self.replayed: list[tuple[str, str]] = []
        self.given_up: list[str] = []

    def replay(self, key: str, payload: str) -> None:
        self.replayed.append((key, payload))
        if self.fail:
            raise RuntimeError("the listener failed again")
        self.cases.services.intake.done(key)

    def give_up(self, payload: str) -> None:
        self.given_up.append(payload)


def test_a_delivery_is_kept_once_and_done_deliveries_are_never_replayed(cases):
    intake = cases.services.intake
    intake.deliveries = deliveries = RecordingDeliveries(cases)
    assert intake.keep("event:Ev1", "{}") and not intake.keep("event:Ev1", "{}")
    intake.done("event:Ev1")
    cases.clock.advance(minutes=5)
    cases.services.sweep()
    assert deliveries.replayed == []


def test_a_delivery_whose_process_died_is_replayed_once_its_claim_lapses(cases):
    intake = cases.services.intake
    intake.deliveries = deliveries = RecordingDeliveries(cases)
    intake.keep("command:T1", '{"command": "/fork"}')
    cases.services.liveness.let_go("delivery", "command:T1")  # its process died: no more heartbeats
    cases.services.sweep()
    assert deliveries.replayed == []  # its claim is still alive
    cases.clock.advance(seconds=31)
    cases.services.sweep()
    cases.services.sweep()
    assert deliveries.replayed == [("command:T1", '{"command": "/fork"}')]


def test_a_heartbeat_keeps_a_slow_delivery_from_being_replayed(cases):
    intake = cases.services.intake
    intake.deliveries = deliveries = RecordingDeliveries(cases)
    intake.keep("event:Ev2", "{}")
    for _ in range(5):
        cases.clock.advance(seconds=20)
        cases.services.heartbeat()
        cases.services.sweep()
    assert deliveries.replayed == []


def test_a_delivery_that_keeps_failing_is_given_up_with_a_notice_after_three_attempts(cases):
    intake = cases.services.intake
    intake.deliveries = deliveries = RecordingDeliveries(cases, fail=True)
    intake.keep("event:Ev3", '{"poison": true}')
    intake.failed("event:Ev3")  # the first processing raised
    for _ in range(MAX_ATTEMPTS + 1):
        cases.clock.advance(seconds=31)
        cases.services.sweep()
    assert len(deliveries.replayed) == MAX_ATTEMPTS - 1 and deliveries.given_up == ['{"poison": true}']
    cases.clock.advance(seconds=31)
    cases.services.sweep()
    assert len(deliveries.replayed) == MAX_ATTEMPTS - 1  # done with it


def test_redeliveries_are_turned_away_for_a_day_then_forgotten(cases):
    intake = cases.services.intake
    intake.keep("event:Ev4", "{}")
    intake.done("event:Ev4")
    cases.clock.advance(hours=23)
    cases.services.sweep()
    assert not intake.keep("event:Ev4", "{}")
    cases.clock.advance(hours=2)
    cases.services.sweep()
    assert intake.keep("event:Ev4", "{}")
