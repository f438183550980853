"""Acknowledged means kept, through outages: PostgreSQL cut off behind a loopback proxy, and SQLite on
a full filesystem. What Slack delivers meanwhile is either not acknowledged (Slack delivers it
again) or answered plainly; once the store is back everything is processed once, nothing twice."""
import json
import os
import subprocess

import pytest
from sqlalchemy import make_url

from bot.domain.model import ForkStatus
from bot.slack.intake import NOT_SAVED

from ..conftest import fresh_postgres
from ..fakes.anthropic_api import is_merge_request
from ..fakes.tcp_proxy import TcpProxy
from ..harness import CHANNEL, GENERAL, RunningBot, wait_until

pytestmark = pytest.mark.timeout(120)


def mention(ts: str, text: str = "are you there?", user: str = "UALICE01") -> dict:
    return {"type": "app_mention", "channel": CHANNEL, "user": user, "text": f"<@UBOT0001> {text}", "ts": ts,
            "event_ts": ts, "team": "T0TEAM001"}


def retry(number: int) -> dict:
    return {"X-Slack-Retry-Num": str(number), "X-Slack-Retry-Reason": "http_error"}


def replies(slack) -> list:
    return [m for m in slack.posts(CHANNEL) if m.shown.startswith("Answer")]


@pytest.fixture
def postgres_behind_a_proxy(slack, claude):
    url = make_url(fresh_postgres())
    proxy = TcpProxy(url.host, url.port or 5432)
    bot = RunningBot(slack, claude, url.set(host="127.0.0.1", port=proxy.port).render_as_string(hide_password=False))
    yield bot, proxy
    proxy.restore()
    bot.stop()
    proxy.stop()


@pytest.fixture
def sqlite_on_a_small_filesystem(slack, claude, tmp_path):
    mount = tmp_path / "small"
    mount.mkdir()
    if os.geteuid() != 0 or subprocess.run(["mount", "-t", "tmpfs", "-o", "size=4m", "tmpfs", str(mount)],
                                           capture_output=True).returncode != 0:
        pytest.skip("needs root to mount a small tmpfs (CI runs as root)")
    bot = RunningBot(slack, claude, f"sqlite:///{mount / 'threadfork.db'}")
    filler = mount / "filler"
    yield bot, filler
    bot.stop()
    subprocess.run(["umount", "-l", str(mount)], check=False)


def fill(filler) -> None:
    """Take every free byte of the filesystem."""
    with open(filler, "wb", buffering=0) as out:
        try:
            while True:
                out.write(b"\0" * 4096)
        except OSError:
            pass


@pytest.mark.postgres
def test_a_message_sent_while_postgresql_is_unreachable_is_answered_once_on_slacks_retry(
        postgres_behind_a_proxy, slack, claude):
    bot, proxy = postgres_behind_a_proxy
    ts = bot.new_ts()
    proxy.cut()
    assert bot.event(mention(ts), event_id="EvDOWN01").status >= 500  # not acknowledged: Slack retries
    assert bot.get("/healthz").status == 503
    proxy.restore()
    assert bot.event(mention(ts), event_id="EvDOWN01", headers=retry(1)).status == 200
    assert bot.event(mention(ts), event_id="EvDOWN01", headers=retry(2)).status == 200  # already kept
    wait_until(lambda: replies(slack), message="the answer")
    bot.settled()
    assert len(replies(slack)) == 1 and len(claude.requests) == 1
    assert bot.get("/healthz").status == 200


@pytest.mark.postgres
def test_a_slash_command_that_cannot_be_recorded_is_answered_at_once_privately(postgres_behind_a_proxy, slack,
                                                                               claude):
    bot, proxy = postgres_behind_a_proxy
    proxy.cut()
    reply = bot.slash("/fork", "during the outage")
    assert reply.status == 200
    assert json.loads(reply.body) == {"response_type": "ephemeral", "text": NOT_SAVED}
    proxy.restore()
    bot.settled()
    assert slack.posts(CHANNEL) == [] and claude.requests == []  # nothing half-done


@pytest.mark.postgres
def test_a_merge_and_a_button_during_an_outage_are_kept_or_told_and_the_fork_merges_once(
        postgres_behind_a_proxy, slack, claude):
    bot, proxy = postgres_behind_a_proxy
    bot.slash("/fork", "--fresh pricing")
    root = bot.fork_root()
    wait_until(lambda: slack.posts(CHANNEL, top_level=False))
    bot.settled()
    fork = bot.store.sessions.fork_by_number(GENERAL, 1)
    proxy.cut()
    reaction = {"type": "reaction_added", "user": "UCAROL01", "reaction": "white_check_mark",
                "item": {"type": "message", "channel": CHANNEL, "ts": root}, "event_ts": bot.new_ts()}
    assert bot.event(reaction, event_id="EvMERGE01").status >= 500
    assert bot.click("fork_merge", str(fork.id), user="UBOB0001").status == 200  # Slack never retries a click
    [told] = wait_until(lambda: slack.responses)
    assert told["text"] == NOT_SAVED and told["response_type"] == "ephemeral"
    proxy.restore()
    assert bot.event(reaction, event_id="EvMERGE01", headers=retry(1)).status == 200
    wait_until(lambda: bot.store.sessions.fork(fork.id).status.value == "merged", message="the merge")
    bot.settled()
    assert sum(1 for r in claude.requests if is_merge_request(r)) == 1


@pytest.mark.postgres
def test_on_slacks_last_retry_the_sender_is_told_plainly_to_send_it_again(postgres_behind_a_proxy, slack, claude):
    bot, proxy = postgres_behind_a_proxy
    proxy.cut()
    assert bot.event(mention(bot.new_ts()), event_id="EvLAST01", headers=retry(3)).status == 200
    [notice] = wait_until(lambda: slack.calls_to("chat.postEphemeral"))
    assert (notice["user"], notice["channel"], notice["text"]) == ("UALICE01", CHANNEL, NOT_SAVED)


def test_a_message_sent_while_sqlite_has_a_full_disk_is_answered_once_when_space_returns(
        sqlite_on_a_small_filesystem, slack, claude):
    bot, filler = sqlite_on_a_small_filesystem
    fill(filler)
    ts = bot.new_ts()
    assert bot.event(mention(ts), event_id="EvFULL01").status >= 500
    assert bot.get("/healthz").status == 503
    reply = bot.slash("/fork", "on a full disk")
    assert json.loads(reply.body)["text"] == NOT_SAVED
    filler.unlink()
    assert bot.get("/healthz").status == 200
    assert bot.event(mention(ts), event_id="EvFULL01", headers=retry(1)).status == 200
    wait_until(lambda: replies(slack), message="the answer")
    bot.settled()
    assert len(replies(slack)) == 1 and len(claude.requests) == 1
    assert bot.store.sessions.forks_in(GENERAL, ForkStatus.OPEN) == []
