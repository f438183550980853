"""The baseline bot: Claude in Slack as a Slack developer would write it in an afternoon from
Slack's and Anthropic's own examples (bolt-python-assistant-template, `client.chat_stream`,
`client.messages.stream(...).text_stream`). The bench runs it beside Threadfork on the same fakes.

Invariants: sync Bolt `App` on a listener pool of THREADFORK_WORKERS threads (Threadfork's size,
so a comparison measures the work, not the pool); no database — each conversation's history is a
list in a dict in this process, lost on restart and never shared between processes. A channel's
(or DM's) top level is one conversation, each thread another. A reply in a thread streams through
chat.startStream/appendStream/stopStream; a reply at a top level is posted, then edited about
once a second (chat_stream needs a thread). Configuration comes from Threadfork's variables.
"""
from __future__ import annotations

import json
import logging
import os
import re
import threading
import time
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

from anthropic import Anthropic
from slack_bolt import App
from slack_bolt.authorization import AuthorizeResult
from slack_bolt.adapter.wsgi import SlackRequestHandler
from slack_sdk import WebClient

SYSTEM = "You are a helpful assistant in a Slack workspace. Answer in Markdown."
MAX_TOKENS = 8192  # Threadfork's default THREADFORK_MAX_TOKENS
UPDATE_EVERY = 1.0  # seconds between chat.update calls of a top-level reply (Slack's rate guidance)
MENTION = re.compile(r"<@[A-Z0-9]+>\s*")

log = logging.getLogger("baseline")


class Conversations:
    """Every conversation's messages, keyed by (channel, thread_ts or None)."""

    def __init__(self):
        self._lock = threading.Lock()
        self._history: dict[tuple[str, str | None], list[dict]] = {}

    def known(self, key: tuple[str, str | None]) -> bool:
        with self._lock:
            return key in self._history

    def add(self, key: tuple[str, str | None], role: str, text: str) -> list[dict]:
        """Append a message; a copy of the whole conversation so far."""
        with self._lock:
            history = self._history.setdefault(key, [])
            history.append({"role": role, "content": text})
            return list(history)


def tokens_by_team():
    """Bolt's `authorize`: SLACK_BOT_TOKEN for every team, or, for the teams BASELINE_TOKENS (a JSON file
    {team: [bot token, bot user]}, read again for a team it lacked) names, theirs: the bench spreads its load
    over several workspaces, as Slack's rate limits are per workspace."""
    known: dict[str, list[str]] = {}

    def authorize(enterprise_id, team_id, logger) -> AuthorizeResult:
        path = os.environ.get("BASELINE_TOKENS")
        if path and team_id not in known:
            known.update(json.loads(Path(path).read_text()))
        token, user = known.get(team_id) or (os.environ["SLACK_BOT_TOKEN"], None)
        return AuthorizeResult(enterprise_id=enterprise_id, team_id=team_id, bot_token=token, bot_user_id=user)

    return authorize


def build_app() -> App:
    client = WebClient(base_url=os.environ.get("SLACK_API_URL", "https://slack.com/api/"))
    app = App(client=client, signing_secret=os.environ["SLACK_SIGNING_SECRET"], authorize=tokens_by_team(),
              listener_executor=ThreadPoolExecutor(max_workers=int(os.environ.get("THREADFORK_WORKERS", "256"))))
    claude = Anthropic()  # ANTHROPIC_API_KEY and ANTHROPIC_BASE_URL come from the environment
    model = os.environ.get("THREADFORK_MODEL", "claude-sonnet-5-5")
    conversations = Conversations()

    def answer(event: dict, client: WebClient, team_id: str | None) -> None:
        channel, thread = event["channel"], event.get("thread_ts")
        key = (channel, thread)
        messages = conversations.add(key, "user", MENTION.sub("", event.get("text", "")).strip())
        # the answer is remembered before its last Slack call, so a reply sent the moment the answer
        # shows complete is answered with it in the history
        remember = lambda text: conversations.add(key, "assistant", text)  # noqa: E731
        try:
            with claude.messages.stream(model=model, max_tokens=MAX_TOKENS, system=SYSTEM,
                                        messages=messages) as stream:
                if thread:
                    stream_into_thread(client, stream, event, team_id, remember)
                else:
                    post_then_update(client, stream, channel, remember)
        except Exception as error:  # noqa: BLE001 - tell the user, as Slack's sample does
            log.exception("reply failed")
            client.chat_postMessage(channel=channel, thread_ts=thread,
                                    text=f":warning: Something went wrong! ({type(error).__name__})")

    @app.event("app_mention")
    def on_mention(event, client, context):
        answer(event, client, context.team_id)

    @app.event("message")
    def on_message(event, client, context):
        if event.get("subtype") or event.get("bot_id"):
            return
        if f"<@{context.bot_user_id}>" in event.get("text", ""):
            return  # the app_mention listener answers it
        thread = event.get("thread_ts")
        if event.get("channel_type") == "im" or (thread and conversations.known((event["channel"], thread))):
            answer(event, client, context.team_id)

    return app


def stream_into_thread(client: WebClient, stream, event: dict, team_id: str | None,
                       remember: Callable[[str], object]) -> None:
    channel, thread = event["channel"], event["thread_ts"]
    client.assistant_threads_setStatus(channel_id=channel, thread_ts=thread, status="is thinking...")
    # outside a DM, chat_stream needs its recipient, else Slack drops the stream
    recipient = {} if event.get("channel_type") == "im" else {
        "recipient_team_id": event.get("team") or team_id, "recipient_user_id": event.get("user")}
    streamer = client.chat_stream(channel=channel, thread_ts=thread, **recipient)
    for delta in stream.text_stream:
        streamer.append(markdown_text=delta)
    remember(stream.get_final_text())
    streamer.stop()


def post_then_update(client: WebClient, stream, channel: str, remember: Callable[[str], object]) -> None:
    ts, text, shown, last = None, "", "", 0.0
    for delta in stream.text_stream:
        text += delta
        now = time.monotonic()
        if ts is None:
            ts = client.chat_postMessage(channel=channel, markdown_text=text)["ts"]
        elif now - last >= UPDATE_EVERY:
            client.chat_update(channel=channel, ts=ts, markdown_text=text)
        else:
            continue
        shown, last = text, now
    remember(text)
    if ts is None:
        client.chat_postMessage(channel=channel, text="(no answer)")
    elif text != shown:
        client.chat_update(channel=channel, ts=ts, markdown_text=text)


def make_wsgi_app():
    """The WSGI application: Bolt's WSGI adapter on POST /slack/events, and GET /healthz."""
    handler = SlackRequestHandler(build_app())

    def wsgi(environ, start_response):
        if environ.get("PATH_INFO") == "/healthz":
            start_response("200 OK", [("Content-Type", "application/json"), ("Content-Length", "11")])
            return [b'{"ok":true}']
        return handler(environ, start_response)

    return wsgi
