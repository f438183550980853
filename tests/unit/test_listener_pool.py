"""The listener pool's threads are started with the process, so a burst of deliveries never waits for one to start."""
import threading

from bot.infrastructure.drain import DrainableExecutor


def test_the_listener_pools_threads_all_run_once_started_and_a_burst_starts_no_more():
    executor = DrainableExecutor(max_workers=8, thread_name_prefix="test-listeners")
    try:
        executor.start_threads()
        ours = [t for t in threading.enumerate() if t.name.startswith("test-listeners")]
        assert len(ours) == 8 and all(t.is_alive() for t in ours)
        release = threading.Event()
        burst = [executor.submit(release.wait, 5) for _ in range(8)]
        assert {t for t in threading.enumerate() if t.name.startswith("test-listeners")} == set(ours)
        release.set()
        assert all(f.result(timeout=5) for f in burst)
    finally:
        executor.shutdown(wait=True)
