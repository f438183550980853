"""A thread as conversations.replies pages give it: each message once, who wrote it, its words and
its files' names (deleted files and joins left out), a bounded number of pages."""
from slack_sdk.errors import SlackApiError
from slack_sdk.web import SlackResponse

from bot.slack.threads import MAX_PAGES, thread_messages, while_given


def page(*messages, more=False):
    return {"ok": True, "messages": list(messages), "has_more": more}


ROOT = {"type": "message", "ts": "1.000001", "user": "U1", "text": "the root", "thread_ts": "1.000001"}


def test_every_page_repeats_the_root_and_each_message_is_kept_once_in_order():
    found = thread_messages([page(ROOT, {"ts": "2.0", "user": "U2", "text": "a"}, more=True),
                             page(ROOT, {"ts": "3.0", "user": "U3", "text": "b"})])
    assert [(m.ts, m.user_id, m.text) for m in found] == [("1.000001", "U1", "the root"), ("2.0", "U2", "a"),
                                                          ("3.0", "U3", "b")]


def test_files_are_named_deleted_ones_and_joins_left_out_and_other_apps_named():
    found = thread_messages([page(
        {"ts": "1.0", "user": "U1", "text": "see", "files": [{"id": "F1", "name": "plan.pdf"},
                                                            {"id": "F2", "mode": "tombstone"}]},
        {"ts": "2.0", "subtype": "channel_join", "user": "U9", "text": "<@U9> has joined"},
        {"ts": "3.0", "subtype": "bot_message", "bot_id": "B1", "username": "ci-bot", "text": "green"},
        {"ts": "4.0", "bot_id": "B2", "bot_profile": {"name": "deployer"}, "text": "shipped"})])
    assert [(m.ts, m.files, m.name) for m in found] == [("1.0", ("plan.pdf",), None), ("3.0", (), "ci-bot"),
                                                        ("4.0", (), "deployer")]
    assert found[1].user_id is None


def test_a_thread_is_read_to_at_most_max_pages():
    def endless():
        n = 0
        while True:
            n += 1
            yield page({"ts": f"{n}.0", "user": "U1", "text": str(n)}, more=True)

    assert len(thread_messages(endless())) == MAX_PAGES


def test_a_later_page_slack_will_not_give_even_after_waiting_ends_the_reading_with_what_was_read():
    def pages():
        yield page(ROOT, {"ts": "2.0", "user": "U2", "text": "a"}, more=True)
        refused = SlackResponse(client=None, http_verb="POST", api_url="conversations.replies", req_args={},
                                data={"ok": False, "error": "ratelimited"}, headers={"Retry-After": "60"},
                                status_code=429)
        raise SlackApiError("ratelimited", refused)

    assert [m.ts for m in thread_messages(while_given(pages()))] == ["1.000001", "2.0"]
