"""Each reply's 👀 (bot/slack/reply.py) on the process's one scheduler and a pool the composition root made:
added once THINKING_DELAY passes with no text visible, never for a fast answer (whose scheduled add is dropped),
and removed only after its add; a delayed call (a top-level answer's "Thinking…") runs on that pool, never once
cancelled."""
import threading
import time

from bot.infrastructure.drain import DrainableExecutor
from bot.infrastructure.scheduler import new_scheduler
from bot.slack.reply import THINKING, Reactions


class Client:
    """Records the reactions.* calls a WebClient would make."""

    def __init__(self, add_takes: float = 0.0):
        self.calls, self.add_takes, self.lock = [], add_takes, threading.Lock()

    def reactions_add(self, **arguments):
        time.sleep(self.add_takes)
        with self.lock:
            self.calls.append(("add", arguments, time.monotonic()))

    def reactions_remove(self, **arguments):
        with self.lock:
            self.calls.append(("remove", arguments, time.monotonic()))


def wait_for(condition, timeout=3.0):
    deadline = time.monotonic() + timeout
    while not condition() and time.monotonic() < deadline:
        time.sleep(0.01)
    return condition()


def reactions(delay=0.2):
    return Reactions(new_scheduler(), DrainableExecutor(max_workers=2, thread_name_prefix="test-thinking"), delay)


def test_the_reaction_appears_after_the_delay_and_goes_after_its_add():
    means, client = reactions(), Client(add_takes=0.2)
    try:
        started = time.monotonic()
        thinking = means.thinking(client, "C1", "1.000")
        assert wait_for(lambda: means.calls.in_flight())  # the add is under way (slow)
        thinking.stop()  # before the add is answered: the removal waits for it
        assert wait_for(lambda: len(client.calls) == 2)
        (first, arguments, added), (second, _, removed) = client.calls
        assert (first, second) == ("add", "remove") and added <= removed
        assert arguments == {"channel": "C1", "timestamp": "1.000", "name": THINKING}
        assert added - started >= 0.2
    finally:
        means.timer.shutdown(wait=False)
        means.calls.settle(2)


def test_a_fast_answer_makes_no_call_and_leaves_no_job_behind():
    means, client = reactions(), Client()
    try:
        thinking = means.thinking(client, "C1", "1.000")
        assert len(means.timer.get_jobs()) == 1
        thinking.stop()
        assert means.timer.get_jobs() == []
        time.sleep(0.4)
        assert client.calls == []
    finally:
        means.timer.shutdown(wait=False)
        means.calls.settle(2)


def test_hundreds_of_replies_share_the_scheduler_s_threads():
    means, client = reactions(delay=0.1), Client()
    try:
        before = threading.active_count()
        replies = [means.thinking(client, "C1", f"{i}.000") for i in range(300)]
        assert wait_for(lambda: len(client.calls) == 300, timeout=10)
        assert threading.active_count() - before <= 12  # the scheduler's job pool and the calls' pool, no more
        for reply in replies:
            reply.stop()
        assert wait_for(lambda: len(client.calls) == 600, timeout=10)
    finally:
        means.timer.shutdown(wait=False)
        means.calls.settle(2)


def test_a_delayed_call_runs_on_the_calls_pool_and_a_cancelled_one_never_runs_nor_stays_scheduled():
    means = reactions()
    ran: list[str] = []
    try:
        means.later(0.1, lambda: ran.append(threading.current_thread().name))
        cancelled = means.later(0.1, lambda: ran.append("cancelled"))
        cancelled.cancel()
        cancelled.cancel()  # twice is once
        assert len(means.timer.get_jobs()) == 1
        assert wait_for(lambda: ran)
        time.sleep(0.2)
        assert len(ran) == 1 and ran[0].startswith("test-thinking") and means.timer.get_jobs() == []
    finally:
        means.timer.shutdown(wait=False)
        means.calls.settle(2)
