"""Claude's API on the Anthropic SDK's own HTTP client (httpx), against the fake Anthropic API: answers reuse
one connection, a connection the API closed while idle is replaced, the SDK retries what it retries, a
connection lost mid-answer or never made is an outage, never a hang or a half answer, and a proxy named in
the environment is used."""
import threading

import pytest

from bot.domain.context import Block, ModelInput
from bot.domain.errors import ModelUnavailable
from bot.llm.claude import Claude

from ..fakes.anthropic_api import FakeAnthropic, Script
from ..fakes.tcp_proxy import TcpProxy
from ..harness import API_KEY, wait_until


def asked(text: str = "hello") -> ModelInput:
    return ModelInput("You are terse.", (Block("user", text, True),))


def claude_at(url: str, **options) -> Claude:
    return Claude(API_KEY, "claude-sonnet-4-5", base_url=url, **options)


def test_answers_one_after_another_reuse_one_connection(claude):
    model = claude_at(claude.url)
    opened = claude.server.connections_opened
    for n in range(5):
        claude.script(Script(text=f"answer {n}"))
        assert model.complete(asked(f"question {n}")).text == f"answer {n}"
    assert claude.server.connections_opened - opened == 1
    assert len(claude.requests) == 5


def test_a_connection_the_api_closed_while_idle_is_replaced_and_the_question_asked_once(claude):
    model = claude_at(claude.url)
    claude.script(Script(text="first"))
    model.complete(asked())
    opened = claude.server.connections_opened
    claude.server.hang_up()
    wait_until(lambda: not claude.server.httpd.open_sockets, message="the fake to let the connection go")
    claude.script(Script(text="second"))
    assert model.complete(asked("again")).text == "second"
    assert claude.server.connections_opened - opened == 1
    assert len(claude.requests) == 2


def test_an_overloaded_answer_is_retried_by_the_sdk_and_a_refusal_is_not(claude):
    model = claude_at(claude.url)
    claude.script(Script(status=529, error_type="overloaded_error"), Script(text="after the retry"))
    assert model.complete(asked()).text == "after the retry"
    assert len(claude.requests) == 2
    claude.script(Script(status=400, error_type="invalid_request_error"))
    with pytest.raises(ModelUnavailable, match="refused"):
        model.complete(asked())
    assert len(claude.requests) == 3


def test_nothing_listening_is_claude_could_not_be_reached(claude):
    model = claude_at("http://127.0.0.1:9", max_retries=0)
    with pytest.raises(ModelUnavailable, match="could not be reached"):
        model.complete(asked())


def test_a_connection_lost_mid_answer_is_an_outage_and_its_connection_is_not_reused(claude):
    proxy = TcpProxy("127.0.0.1", claude.server.httpd.server_port)
    try:
        model = claude_at(f"http://127.0.0.1:{proxy.port}", max_retries=0)
        claude.script(Script(text="a long answer " * 20, chunks=20, chunk_delay=0.2))
        threading.Timer(0.5, proxy.cut).start()
        with pytest.raises(ModelUnavailable):
            model.complete(asked())
        proxy.restore()
        claude.script(Script(text="whole"))
        assert model.complete(asked("again")).text == "whole"
    finally:
        proxy.stop()


def test_a_stream_that_stops_sending_is_a_timeout_not_a_hang(claude):
    model = claude_at(claude.url, timeout=0.5, max_retries=0)
    claude.script(Script(text="slow " * 4, chunks=4, chunk_delay=2.0))
    with pytest.raises(ModelUnavailable, match="in time"):
        model.complete(asked())


def test_a_proxy_named_in_the_environment_is_used(claude, monkeypatch):
    proxy = FakeAnthropic().start()  # stands in for the proxy: it only has to be reached
    try:
        monkeypatch.setenv("HTTP_PROXY", proxy.url)
        monkeypatch.delenv("NO_PROXY", raising=False)
        monkeypatch.delenv("no_proxy", raising=False)
        model = claude_at(claude.url, max_retries=0)
        with pytest.raises(ModelUnavailable):
            model.complete(asked())  # the stand-in answers the proxied request 404
        assert proxy.server.connections_opened == 1 and claude.server.connections_opened == 0
    finally:
        proxy.stop()
