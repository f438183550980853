"""Two real `python -m bot` processes on one SQLite file expire the same idle forks (issue 19): each
fork gets one reminder, one summary request and one summary post, whatever the number of replicas."""
import json
import time

import pytest

from ..fakes.anthropic_api import Script, is_merge_request
from ..harness import CHANNEL, wait_until
from ..processes import BotProcess
from .test_faults import open_fork, processes, settled  # noqa: F401 - `processes` is a fixture

EXPIRING = {"threadfork_sweep_interval": "1s", "threadfork_fork_idle_reminder": "4s",
            "threadfork_fork_expiry": "12s"}
FORKS = 3


def summary_posts(slack) -> list:
    return [m for m in slack.posts(CHANNEL, top_level=True) if "Threadfork merged idle fork" in m.get("text", "")]


def drafts(slack) -> list:
    return [m for m in slack.posts(CHANNEL) if "summary*, written because this fork sat idle" in m.get("text", "")]


def reminders(slack, root: str) -> list:
    return [m for m in slack.posts(CHANNEL) if m.get("thread_ts") == root and "has been quiet" in m.get("text", "")]


@pytest.mark.parametrize("merge_review", ["false", "true"])
def test_two_processes_sweeping_one_sqlite_file_remind_request_and_post_each_idle_fork_once(
        tmp_path, slack, claude, migrated_sqlite_url, processes, merge_review):
    replicas = [BotProcess(tmp_path, slack, claude, migrated_sqlite_url, name=f"replica{i}",
                           threadfork_merge_review=merge_review,
                           **EXPIRING) for i in range(2)]
    processes.extend(replicas)
    for replica in replicas:
        replica.wait_healthy()
    claude.script(*[Script(text=f"answer about topic {n}") for n in range(FORKS)],
                  *[Script(text=f"summary {n}", chunks=4, chunk_delay=0.3) for n in range(FORKS)])
    roots = [open_fork(replicas[n % 2], slack, f"--fresh idle topic {n}") for n in range(FORKS)]
    posted = summary_posts if merge_review == "false" else drafts
    expired = lambda: len(posted(slack)) >= FORKS  # noqa: E731
    wait_until(expired, timeout=60, interval=0.2, message="every fork to expire")
    settled(migrated_sqlite_url)
    # what is checked is that later sweeps do nothing more, and a sweep in another process leaves no trace
    # when it finds nothing to do: three sweep intervals is the window, on each replica
    time.sleep(3 * 1.0)
    settled(migrated_sqlite_url)
    topics = [f"idle topic {n}" for n in range(FORKS)]
    # a fresh fork's request opens with its topic (later ones also quote earlier merges, to find conflicts)
    asked = [json.dumps(r["messages"][0]) for r in claude.requests if is_merge_request(r)]
    assert [len(reminders(slack, root)) for root in roots] == [1] * FORKS
    assert [sum(1 for r in asked if topic in r) for topic in topics] == [1] * FORKS
    if merge_review == "false":  # the summary in the channel names its fork's topic
        assert [sum(1 for m in posted(slack) if topic in m.get("text", "")) for topic in topics] == [1] * FORKS
    else:  # the draft waits in its fork's thread
        assert [sum(1 for m in posted(slack) if m.get("thread_ts") == root) for root in roots] == [1] * FORKS
