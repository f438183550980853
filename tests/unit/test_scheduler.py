"""The process's timers (bot/infrastructure/scheduler.py): a heartbeat that comes late still runs, so a busy process's claims
never lapse while it works (APScheduler drops a run later than its misfire grace; under CPU load the beats of
a replica came more than a second late and were dropped, and another replica took its merge over: a second
summary request for one expiring fork, issue 32)."""
import time

from bot.infrastructure.scheduler import SWEEP_JOB, start_scheduler


class Services:
    def __init__(self):
        self.beats = 0
        self.liveness = type("Liveness", (), {"ttl": 0.3})()

    def heartbeat(self):
        self.beats += 1

    def sweep(self):
        pass


def test_a_heartbeat_is_never_dropped_for_being_late_and_runs_every_third_of_the_lease():
    services = Services()
    scheduler = start_scheduler(services, interval_seconds=60)
    try:
        heartbeat = scheduler.get_job("threadfork-heartbeat")
        assert heartbeat.misfire_grace_time is None and heartbeat.coalesce
        assert heartbeat.trigger.interval.total_seconds() == 0.1
        assert scheduler.get_job(SWEEP_JOB).trigger.interval.total_seconds() == 60
        deadline = time.monotonic() + 5
        while services.beats < 3 and time.monotonic() < deadline:
            time.sleep(0.05)
        assert services.beats >= 3
    finally:
        scheduler.shutdown(wait=False)
