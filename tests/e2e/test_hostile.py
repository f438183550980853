"""Hostile input, end to end: a fork topic or Claude's words cannot ping anyone, cannot show one
address while linking to another, and cannot make a payload Slack refuses (the fake Slack checks
every payload with slack-sdk's Block Kit models; the fixtures fail on any refusal)."""
import json
import re

import pytest

from bot.domain.text import ZWSP

from ..fakes.anthropic_api import Script, request_texts
from ..harness import CHANNEL, wait_until

BOSS = "U0BOSS001"
HOSTILE = (f"<!here> <!channel|all> @everyone <@{BOSS}> <!subteam^S0DEVS|@devs> &amp; <b>bold</b> "
           "[https://bank.example/login](https://evil.example/steal) <https://evil.example/steal|https://bank.example> ")
LONG_TOPIC = (HOSTILE * 20)[:3_999] + "!"  # 4,000 characters: the whole of a slash command
NOTIFYING = re.compile(rf"<!(here|channel|everyone|subteam)|<@{BOSS}|@(here|channel|everyone)\b", re.IGNORECASE)
MRKDWN_LINK_TO_EVIL = re.compile(r"<https?://evil\.example[^>]*\|")
MARKDOWN_LINK_TO_EVIL = re.compile(r"\]\(https?://evil\.example")


def payloads(slack):
    """(kind, text) of everything the bot sent Slack: `mrkdwn` texts and `markdown` texts."""
    found = []
    for call in slack.calls:
        args = call.args
        if isinstance(args.get("text"), str):
            found.append(("mrkdwn", args["text"]))
        if isinstance(args.get("markdown_text"), str):
            found.append(("markdown", args["markdown_text"]))
        for chunk in args.get("chunks") or []:
            found.append(("markdown", chunk.get("text", "")))
        for block in list(args.get("blocks") or []) + list((args.get("view") or {}).get("blocks") or []):
            markdown = block.get("type") == "markdown"
            found.append(("markdown", block["text"]) if markdown else ("mrkdwn", json.dumps(block, ensure_ascii=False)))
    found += [("mrkdwn", body.get("text", "")) for body in slack.responses]
    return found


def assert_harmless(slack):
    sent = payloads(slack)
    assert sent
    for kind, text in sent:
        assert not NOTIFYING.search(text), text[:300]
        assert not MRKDWN_LINK_TO_EVIL.search(text), text[:300]
        if kind == "markdown":
            assert not MARKDOWN_LINK_TO_EVIL.search(text), text[:300]


@pytest.mark.settings(threadfork_fork_token_budget=1)
def test_a_hostile_4000_character_topic_is_harmless_and_accepted_everywhere_it_appears(bot, slack, claude):
    bot.slash("/fork", LONG_TOPIC)
    root = bot.fork_root()
    wait_until(lambda: [m for m in slack.posts(CHANNEL, top_level=False) if "budget" in m.get("text", "")])
    bot.settled()
    assert request_texts(claude.requests[0])[-1].endswith("\n" + LONG_TOPIC)  # Claude reads it whole
    [posted] = slack.posts(CHANNEL, top_level=True)
    assert " ".join(LONG_TOPIC.split()).replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;") \
        .replace("@everyone", f"@{ZWSP}everyone") in posted["text"]  # whole in the fallback text
    bot.say("UBOB0001", "over budget already?", thread_ts=root)  # refused privately, naming the fork
    wait_until(lambda: slack.calls_to("chat.postEphemeral"))
    for command in ("/forks", "/context"):
        bot.slash(command)
    bot.event({"type": "app_home_opened", "user": "UALICE01", "channel": "D0HOME001", "tab": "home",
               "event_ts": "1.2"})
    wait_until(lambda: len(slack.responses) == 2 and slack.calls_to("views.publish"))
    bot.settled()
    bot.clock.advance(hours=25)
    bot.services.sweep()  # the idle reminder
    wait_until(lambda: [m for m in slack.posts(CHANNEL, top_level=False) if "quiet" in m.get("text", "")])
    bot.react("UCAROL01", root)
    wait_until(lambda: [p for p in slack.posts(CHANNEL, top_level=True) if "merged fork" in p.get("text", "")])
    bot.settled()
    bot.slash("/merge", "1")  # refused: already merged, naming it
    wait_until(lambda: len(slack.responses) == 3)
    assert "already merged" in slack.responses[-1]["text"]
    assert_harmless(slack)


@pytest.mark.parametrize("topic", ["x" * 3_001, "&<>" * 1_333, HOSTILE])
def test_long_and_escaped_topics_give_block_kit_slack_accepts(bot, slack, claude, topic):
    bot.slash("/fork", f"--fresh {topic}")
    root = bot.fork_root()
    bot.settled()
    bot.react("UCAROL01", root)
    wait_until(lambda: [p for p in slack.posts(CHANNEL, top_level=True) if "merged fork" in p.get("text", "")])
    bot.slash("/forks")
    wait_until(lambda: slack.responses)
    bot.settled()
    assert_harmless(slack)  # and the fixture checks that Slack accepted every payload


def test_claudes_hostile_words_ping_nobody_and_show_mentioned_people_by_name(bot, slack, claude):
    slack.names[BOSS] = "the boss"
    claude.default_script = Script(text=f"Sure. {HOSTILE}\nAsk <@{BOSS}> again. " * 3, chunks=12, chunk_delay=0.15)
    bot.say("UALICE01", "say something nasty", mention=True)
    bot.slash("/fork", "--fresh a side topic")  # streamed into the thread
    root = bot.fork_root()
    wait_until(lambda: slack.posts(CHANNEL, top_level=False))
    bot.settled()
    claude.default_script = None
    claude.script(Script(text=f"Summary. {HOSTILE} Decided with <@{BOSS}>."))
    bot.react("UCAROL01", root)
    [summary] = wait_until(lambda: [p for p in slack.posts(CHANNEL, top_level=True) if "merged fork" in p.get("text", "")])
    bot.settled()
    assert_harmless(slack)
    answers = [p.shown for p in slack.posts(CHANNEL) if p.shown.startswith("Sure.")]
    assert len(answers) == 2 and all(f"@{ZWSP}the boss" in a for a in answers)
    assert f"@{ZWSP}the boss" in summary["blocks"][1]["text"]
    assert "https://evil.example/steal" in answers[0]  # the real target stays visible, as itself
    assert len(slack.calls_to("users.info")) <= 3  # alice, carol and the boss: once each, however many updates
