"""Stop across replicas, with real `python -m bot` processes sharing one database (SQLite and PostgreSQL):
the replica streaming the answer stops it within a second when the other replica receives Slack's
agent_session_stopped, and a stop delivered to both (and again) is obeyed once."""
import time

from sqlalchemy import create_engine, text

from bot.slack.thread_reply import STREAM_INTERVAL

from ..fakes.anthropic_api import Script
from ..harness import CHANNEL, wait_until
from ..processes import BotProcess
from .test_faults import FAST, open_fork, processes, settled  # noqa: F401 - `processes` is a fixture

SLOW = Script(text=" ".join(f"word{n}" for n in range(150)), chunks=75, chunk_delay=0.1)  # ~7.5 s


def answer_rows(migrated_url: str) -> list[dict]:
    engine = create_engine(migrated_url)
    try:
        with engine.connect() as conn:
            return [dict(r) for r in conn.execute(text(
                "SELECT t.status, t.stopped_by, t.text FROM turns t JOIN sessions s ON s.id = t.session_id "
                "WHERE s.kind = 'fork' AND t.role = 'assistant' ORDER BY t.id")).mappings()]
    finally:
        engine.dispose()


def stop_event(root: str, user: str, streaming: list[str]) -> dict:
    return {"type": "agent_session_stopped", "channel": CHANNEL, "thread_ts": root, "user": user,
            "streaming_message_ts": streaming, "event_ts": f"{time.time():.6f}"}


def test_the_replica_streaming_an_answer_stops_it_whichever_replica_hears_stop_and_only_once(
        tmp_path, slack, claude, migrated_url, processes):  # noqa: F811
    streaming, other = (BotProcess(tmp_path, slack, claude, migrated_url, name=name, **FAST)
                        for name in ("streaming", "other"))
    processes.extend([streaming, other])
    streaming.wait_healthy(), other.wait_healthy()
    claude.script(SLOW)
    root = open_fork(streaming, slack, "--fresh tell me everything")  # its topic is answered by `streaming`
    wait_until(lambda: (s := slack.session(CHANNEL, root)) and s.status == "processing", timeout=15,
               message="the session processing")
    before = len(slack.calls_to("chat.appendStream"))
    wait_until(lambda: len(slack.calls_to("chat.appendStream")) > before, timeout=15, message="words streaming")
    # pressed just before the next append is due (1.5 s after the last): the streaming replica hears of it
    # only from its watcher, and must not stream another word meanwhile
    time.sleep(STREAM_INTERVAL - 0.1)
    stopped = slack.press_stop(CHANNEL, root)
    pressed = time.monotonic()
    assert other.event(stop_event(root, "UBOB0001", stopped), "EvSTOP1") == 200
    acked = time.monotonic()  # the stop was recorded before this acknowledgement
    cancelled = wait_until(lambda: claude.cancelled.get(0), timeout=5, message="the model stream to close")
    assert cancelled.at - pressed < 1.0 and cancelled.deltas < 75
    # the same stop again, on both replicas, and a second press: nothing more happens
    assert streaming.event(stop_event(root, "UBOB0001", stopped), "EvSTOP1") == 200
    assert other.event(stop_event(root, "UCAROL01", []), "EvSTOP2") == 200
    settled(migrated_url)
    [answer] = answer_rows(migrated_url)
    assert (answer["status"], answer["stopped_by"]) == ("stopped", "UBOB0001")
    [stream] = [m for m in slack.posts(CHANNEL, top_level=False) if m.method == "chat.startStream"]
    assert [c for c in slack.calls_to("chat.stopStream") if c["ts"] == stream.ts] and not stream.streaming
    assert not [c for c in slack.calls_to("chat.appendStream") if c["ts"] == stream.ts and c.at > acked]
    assert stream.shown.count("Stopped by") == 1 and stream.shown.startswith(answer["text"])
    assert len(claude.cancelled) == 1 and len(claude.requests) == 1
    wait_until(lambda: slack.session(CHANNEL, root).status == "active", message="the session back to active")
    # an append Slack refused because the press came first (Slack stops the stream at once) is no failure:
    # the stream was still ended by chat.stopStream, never rewritten
    assert not [c for c in slack.calls_to("chat.update") if c["ts"] == stream.ts]
