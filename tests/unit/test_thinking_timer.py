"""The one timer thread behind every reply's 👀 (bot/slack/thinking.py): each call runs once, when due,
whichever order they were scheduled in."""
import threading
import time

from bot.slack.thinking import _Later


def test_calls_run_when_due_an_earlier_one_scheduled_last_included():
    later, ran, done = _Later(), [], threading.Event()
    started = time.monotonic()

    def call(name):
        def run():
            ran.append((name, time.monotonic() - started))
            if len(ran) == 3:
                done.set()
        return run

    later.call_in(0.4, call("late"))
    time.sleep(0.05)  # the thread is waiting for it now
    later.call_in(0.5, call("later"))  # due after what the thread waits for: it need not be woken
    later.call_in(0.1, call("early"))  # due before it: the thread is woken and runs it first
    assert done.wait(3)
    assert [name for name, _ in ran] == ["early", "late", "later"]
    assert 0.1 <= ran[0][1] < 0.35 and ran[1][1] >= 0.4 and ran[2][1] >= 0.5
