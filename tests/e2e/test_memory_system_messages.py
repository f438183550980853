"""Memory on a model that takes mid-conversation system messages (Claude Opus 4.8): an entry saved while the
channel's conversation runs reaches its next request as one `{"role": "system"}` message after the last user
message, and the request's top-level `system` stays byte for byte what it was, so the cached prefix is read,
not written again (docs/memory.md, "What it costs")."""
import pytest

from .test_cache_ttls import LONG
from .test_channel_settings import ask_parent
from .test_memory import LAUNCH, fork_request, remember, system_text

OPUS_4_8 = "claude-opus-4-8"


def texts(message) -> str:
    return "".join(block.get("text", "") for block in message["content"])


def usage(claude, request) -> dict:
    return claude.usages[claude.requests.index(request)]


@pytest.mark.settings(threadfork_model=OPUS_4_8)
def test_an_entry_reaches_the_running_conversation_after_its_cached_prefix(bot, slack, claude):
    ask_parent(bot, claude, f"first: {LONG} {LONG}")  # long enough to cache
    before = ask_parent(bot, claude, "second point")
    assert before["model"] == OPUS_4_8 and all(m["role"] != "system" for m in before["messages"])
    remember(bot, slack)
    bot.settled()
    after = ask_parent(bot, claude, "when is the launch?")
    assert after["system"] == before["system"]  # byte for byte: the prefix is not written again
    assert LAUNCH not in system_text(after)
    *_, last_user, note = after["messages"]
    assert note["role"] == "system" and LAUNCH in texts(note) and "UALICE01" in texts(note)
    assert last_user["role"] == "user" and "when is the launch?" in texts(last_user)
    assert sum(m["role"] == "system" for m in after["messages"]) == 1
    # everything the request before wrote to (or read from) the cache is read now
    written = usage(claude, before)
    assert written["cache_read_input_tokens"] + written["cache_creation_input_tokens"] > 1024
    assert usage(claude, after)["cache_read_input_tokens"] >= \
        written["cache_read_input_tokens"] + written["cache_creation_input_tokens"]

    remember(bot, slack, "the beta ends in May", user="UBOB0001")
    bot.settled()
    again = ask_parent(bot, claude, "and the beta?")
    assert again["system"] == before["system"]
    [note] = [m for m in again["messages"] if m["role"] == "system"]  # both entries in one message, the last
    assert again["messages"][-1] is note and LAUNCH in texts(note) and "the beta ends in May" in texts(note)
    assert usage(claude, again)["cache_creation_input_tokens"] < usage(claude, again)["cache_read_input_tokens"]

    # a fork that inherits the conversation keeps its prefix too: same system, the parent's cache read, and the
    # entries saved since that prefix began told after it
    fork = fork_request(bot, claude, "", "pricing")
    assert fork["system"] == before["system"] and all(m["role"] != "system" for m in fork["messages"])
    assert "the beta ends in May" in str(fork["messages"][-1]["content"])
    assert usage(claude, fork)["cache_read_input_tokens"] >= usage(claude, again)["cache_read_input_tokens"]
    assert not claude.rejections


@pytest.mark.settings(threadfork_model=OPUS_4_8)
def test_an_entry_saved_before_the_conversation_began_is_in_its_system(bot, slack, claude):
    remember(bot, slack)
    bot.settled()
    first = ask_parent(bot, claude, "hello")
    assert LAUNCH in system_text(first) and all(m["role"] != "system" for m in first["messages"])
