import pytest

from bot.domain.commands import (
    FORK_USAGE, ForkCommand, HelpCommand, MergeCommand, ThreadCommand, mentions, parse_fork, parse_merge,
    parse_thread_command, strip_mention,
)
from bot.domain.errors import UsageError
from bot.domain.model import Mode


@pytest.mark.parametrize("text, expected", [
    ("", ForkCommand(Mode.INHERIT, "")),
    ("pricing tiers", ForkCommand(Mode.INHERIT, "pricing tiers")),
    ("--fresh", ForkCommand(Mode.FRESH, "")),
    ("--fresh brainstorm names", ForkCommand(Mode.FRESH, "brainstorm names")),
    ("--inherit  a -- b", ForkCommand(Mode.INHERIT, "a -- b")),
])
def test_fork_arguments_parse_into_mode_and_topic(text, expected):
    assert parse_fork(text) == expected


def test_fork_help_is_recognised():
    assert parse_fork("help") == HelpCommand()


def test_an_unknown_flag_is_refused_with_the_usage_text():
    with pytest.raises(UsageError) as error:
        parse_fork("--frsh topic")
    assert "--frsh" in str(error.value) and FORK_USAGE in str(error.value)


def test_conflicting_flags_are_refused():
    with pytest.raises(UsageError):
        parse_fork("--fresh --inherit x")


@pytest.mark.parametrize("text, expected", [
    ("", MergeCommand(None, "")),
    ("3", MergeCommand(3, "")),
    ("#3 keep the numbers", MergeCommand(3, "keep the numbers")),
    ("focus on cost", MergeCommand(None, "focus on cost")),
])
def test_merge_arguments_parse_into_number_and_guidance(text, expected):
    assert parse_merge(text) == expected


@pytest.mark.parametrize("text, expected", [
    ("merge", ThreadCommand("merge", "")),
    ("Merge: only the decision", ThreadCommand("merge", "only the decision")),
    ("abandon", ThreadCommand("abandon", "")),
    ("merge sort is faster?", ThreadCommand("merge", "sort is faster?")),
    ("merger talks", None),
    ("let's merge", None),
])
def test_thread_commands_are_the_first_word_after_the_mention(text, expected):
    assert parse_thread_command(text) == expected


def test_only_the_bots_mention_is_stripped():
    assert strip_mention("<@UBOT> ask <@UBOB> about it", "UBOT") == "ask <@UBOB> about it"
    assert mentions("hi <@UBOT|threadfork>", "UBOT")
    assert not mentions("hi <@UBOB>", "UBOT")


def test_fork_help_names_every_command_and_gesture():
    for needed in ("/fork", "--fresh", "--inherit", "/merge", "/forks", "/context", "/threadfork",
                   "/threadfork forget", "/fork help", "✅", "❌", "Merge button", "Abandon button", "@Threadfork merge",
                   "@Threadfork abandon", "@Threadfork fork", "Fork from here", "Merge this fork", "Stop", "👍", "👎",
                   "🔁", "🔒", "Private forks", "any other thread"):
        assert needed in FORK_USAGE, needed
    assert len(FORK_USAGE) < 3000  # one section block holds it (Slack: 3,000 characters)
