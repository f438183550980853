"""Which kept deliveries read their turn's channel in the keep's own write (bot/slack/intake.py)."""
from bot.domain.model import Channel
from bot.slack.intake import turn_channel


def delivery(**event) -> dict:
    return {"type": "event_callback", "team_id": "T1", "event": {"channel": "C1", "ts": "5.1", **event}}


def test_a_top_level_mention_or_dm_reads_its_channel_in_the_workspace_its_listener_names():
    assert turn_channel(delivery(type="app_mention"), "T1") == Channel("T1", "C1")
    assert turn_channel(delivery(type="message", channel="D1", thread_ts="5.1"), "T9") == Channel("T9", "D1")
    assert turn_channel(delivery(type="message", subtype="file_share"), "T1") == Channel("T1", "C1")


def test_a_threads_message_an_edit_another_event_or_an_unknown_workspace_reads_nothing_then():
    assert turn_channel(delivery(type="message", thread_ts="4.1"), "T1") is None  # its fork is read first
    assert turn_channel(delivery(type="message", subtype="message_changed"), "T1") is None
    assert turn_channel(delivery(type="reaction_added"), "T1") is None
    assert turn_channel(delivery(type="app_mention"), None) is None
    assert turn_channel({"command": "/fork", "channel_id": "C1"}, "T1") is None
