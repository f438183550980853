"""Delivering Claude's answer to Slack.

The answer is collected as it streams and posted as Markdown where the reply belongs: the
channel's top level for a parent, the fork's thread for a fork. Long answers continue in
follow-up messages, each under Slack's Markdown cap, code fences kept balanced.
"""
from __future__ import annotations

from typing import TYPE_CHECKING

from ..services.ports import Place
from .render import MARKDOWN_LIMIT, neutralise
from .split import split_markdown

if TYPE_CHECKING:
    from .gateway import SlackChat


class BufferedReply:
    def __init__(self, chat: SlackChat, place: Place):
        self.chat = chat
        self.place = place
        self.parts: list[str] = []

    def write(self, delta: str) -> None:
        self.parts.append(delta)

    def finish(self) -> str | None:
        text = neutralise("".join(self.parts)) or "_(Claude returned an empty answer.)_"
        first_ts = None
        for chunk in split_markdown(text, MARKDOWN_LIMIT):
            response = self.chat.call("chat_postMessage", channel=self.place.channel_id,
                                      thread_ts=self.place.thread_ts, markdown_text=chunk)
            first_ts = first_ts or response["ts"]
        return first_ts

    def fail(self, notice: str) -> None:
        self.chat.call("chat_postMessage", channel=self.place.channel_id, thread_ts=self.place.thread_ts,
                       text=notice)
