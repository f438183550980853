"""Fault injection with real processes: replicas sharing one database, and processes killed in
the middle of a merge and of a reply. Runs on SQLite and on PostgreSQL."""
import json
import threading
import time
import urllib.parse

import pytest

from ..fakes.anthropic_api import Script, is_merge_request, request_texts
from ..harness import CHANNEL, wait_until
from ..processes import BotProcess

FAST = {"threadfork_sweep_interval": "1s", "threadfork_lease": "4s"}


def mention(user: str, text: str, ts: str, thread_ts: str | None = None) -> dict:
    event = {"type": "app_mention", "channel": CHANNEL, "user": user, "text": f"<@UBOT0001> {text}", "ts": ts,
             "event_ts": ts, "team": "T0TEAM001"}
    return {**event, "thread_ts": thread_ts} if thread_ts else event


def slash(command: str, text: str, user: str, slack) -> tuple[bytes, str]:
    form = {"command": command, "text": text, "user_id": user, "user_name": user.lower(), "channel_id": CHANNEL,
            "team_id": "T0TEAM001", "response_url": slack.response_url(command.strip("/")), "trigger_id": "1.t",
            "api_app_id": "A0THREADFORK", "token": "unused"}
    return urllib.parse.urlencode(form).encode(), "application/x-www-form-urlencoded"


@pytest.fixture
def processes(tmp_path):
    started = []
    yield started
    for process in started:
        process.stop()


def summaries(slack):
    return [p for p in slack.posts(CHANNEL, top_level=True) if "merged fork" in p.get("text", "")]


def test_two_replicas_answer_every_turn_once_in_order_and_merge_once(tmp_path, slack, claude, database_url,
                                                                        processes):
    replicas = [BotProcess(tmp_path, slack, claude, database_url, name=f"replica{i}", **FAST) for i in range(2)]
    processes.extend(replicas)
    for replica in replicas:
        replica.wait_healthy(timeout=60)
    claude.script(*[Script(text=f"answer {n}", chunks=4, chunk_delay=0.05) for n in range(6)])
    stamps = [f"1700000100.{n:06d}" for n in range(6)]
    for n, ts in enumerate(stamps):  # spread across replicas; every other one re-delivered to the other
        event = mention("UALICE01" if n % 2 else "UBOB0001", f"message {n}", ts)
        assert replicas[n % 2].event(event, f"EvREP{n}") == 200
        if n % 2 == 0:
            assert replicas[(n + 1) % 2].event(event, f"EvREP{n}") == 200
        time.sleep(0.05)
    wait_until(lambda: len(claude.requests) >= 1 and not any(
        t["status"] in ("pending", "streaming") for t in turn_rows(database_url)), timeout=30)
    time.sleep(0.5)
    rows = turn_rows(database_url)
    users = [r for r in rows if r["role"] == "user"]
    assert [r["text"] for r in users] == [f"message {n}" for n in range(6)]  # kept, in order
    assert all(r["status"] == "answered" for r in users)
    answers = [r for r in rows if r["role"] == "assistant"]
    assert len(answers) == len(claude.requests) <= 6  # one reply per batch, none doubled
    for request in claude.requests:  # each request holds every earlier message: no half context
        texts = [t.split("\n", 1)[-1] for t in request_texts(request)]
        asked = [t for t in texts if t.startswith("message ")]
        assert asked == [f"message {n}" for n in range(len(asked))]
    # a merge raced on both replicas happens once
    body, kind = slash("/fork", "--fresh race", "UALICE01", slack)
    assert replicas[0].post(body, kind) == 200
    wait_until(lambda: [m for m in slack.posts(CHANNEL, top_level=True) if m.get("blocks")], timeout=15)
    root = [m for m in slack.posts(CHANNEL, top_level=True) if m.get("blocks")][-1].ts
    wait_until(lambda: any(m.get("thread_ts") == root for m in slack.posts(CHANNEL)), timeout=15)
    claude.script(Script(text="race summary", chunk_delay=0.2))
    reaction = {"type": "reaction_added", "user": "UCAROL01", "reaction": "white_check_mark",
                "item": {"type": "message", "channel": CHANNEL, "ts": root}, "event_ts": "1.1"}
    threads = [threading.Thread(target=replicas[i % 2].event, args=(reaction, f"EvMERGE{i}")) for i in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    wait_until(lambda: summaries(slack), timeout=15)
    time.sleep(1)
    assert len(summaries(slack)) == 1 and sum(1 for r in claude.requests if is_merge_request(r)) == 1


def test_a_process_killed_mid_merge_is_finished_by_the_next_one_exactly_once(tmp_path, slack, claude,
                                                                               database_url, processes):
    first = BotProcess(tmp_path, slack, claude, database_url, name="first", **FAST)
    processes.append(first)
    first.wait_healthy()
    body, kind = slash("/fork", "--fresh crash test", "UALICE01", slack)
    first.post(body, kind)
    wait_until(lambda: any(m.get("thread_ts") for m in slack.posts(CHANNEL)), timeout=15)
    time.sleep(0.5)
    root = [m for m in slack.posts(CHANNEL, top_level=True) if m.get("blocks")][0].ts
    claude.script(Script(text="summary that never arrives", chunks=20, chunk_delay=0.5),
                  Script(text="THE RECOVERED SUMMARY"))
    first.event({"type": "reaction_added", "user": "UCAROL01", "reaction": "white_check_mark",
                 "item": {"type": "message", "channel": CHANNEL, "ts": root}, "event_ts": "1.2"}, "EvKILL1")
    wait_until(lambda: any(is_merge_request(r) for r in claude.requests), timeout=15)
    first.kill()
    second = BotProcess(tmp_path, slack, claude, database_url, name="second", **FAST)
    processes.append(second)
    assert second.wait_healthy() < 30
    [post] = wait_until(lambda: summaries(slack), timeout=30)
    assert post["blocks"][1]["text"] == "THE RECOVERED SUMMARY"
    time.sleep(2.5)  # more sweeps: nothing more happens
    assert len(summaries(slack)) == 1
    assert sum(1 for r in claude.requests if is_merge_request(r)) == 2  # the lost call, then one more


def test_a_process_killed_mid_reply_leaves_no_half_answer_and_the_turn_is_answered(tmp_path, slack, claude,
                                                                                  database_url, processes):
    first = BotProcess(tmp_path, slack, claude, database_url, name="first", **FAST)
    processes.append(first)
    first.wait_healthy()
    claude.script(Script(text="a long answer " * 20, chunks=20, chunk_delay=0.5), Script(text="THE RETRIED ANSWER"))
    first.event(mention("UALICE01", "tell me everything", "1700000200.000001"), "EvKILL2")
    wait_until(lambda: slack.posts(CHANNEL), timeout=15)  # the answer started showing
    first.kill()
    second = BotProcess(tmp_path, slack, claude, database_url, name="second", **FAST)
    processes.append(second)
    second.wait_healthy()
    wait_until(lambda: any("THE RETRIED ANSWER" in (m.get("markdown_text") or "") for m in slack.posts(CHANNEL)),
               timeout=30)
    assert any("interrupted" in (m.get("text") or "") for m in slack.posts(CHANNEL))
    rows = wait_until(lambda: [r for r in [turn_rows(database_url)] if r[-1]["status"] == "complete"], timeout=10)[0]
    assert [(r["role"], r["status"]) for r in rows] == [
        ("user", "answered"), ("assistant", "aborted"), ("assistant", "complete")]
    assert rows[2]["text"] == "THE RETRIED ANSWER"
    retried = claude.requests[-1]
    assert "a long answer" not in json.dumps(retried)  # the cut-off text is not presented as an answer


def turn_rows(database_url: str) -> list[dict]:
    from sqlalchemy import create_engine, text

    engine = create_engine(database_url)
    try:
        with engine.connect() as conn:
            rows = conn.execute(text("SELECT role, status, text FROM turns ORDER BY session_id, seq")).mappings()
            return [dict(r) for r in rows]
    finally:
        engine.dispose()
