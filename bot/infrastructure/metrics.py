"""Every metric the bot exports, in Prometheus' format (prometheus-client), and the one way to read them.

HTTP mode serves them at /metrics on PORT (bot/entrypoints/wsgi.py), Socket Mode on THREADFORK_HEALTH_PORT
(bot/entrypoints/health.py). Each hook elsewhere is one line calling a function or a metric here, where it happens
(the Slack client counts its own calls, bot/slack/clients.py; an answer times itself, bot/slack/reply.py).

Invariants:
- Every name starts `threadfork_`. Labels carry bounded values only — a place (parent, fork), an outcome,
  a gesture, a Slack method, a token kind — never people's words, user ids, message ids or channel ids.
- Several gunicorn workers report as one: bot/entrypoints/server.py points PROMETHEUS_MULTIPROC_DIR at a fresh folder
  before it forks them, prometheus-client's multiprocess mode keeps each worker's values there, and a
  scrape, whichever worker answers it, sums them (`MultiProcessCollector`).
- The queue's depth and age are read from the database at each scrape, so every replica and worker
  reports the same figures (the store's, not a process's).
"""
from __future__ import annotations

import logging
import os

from prometheus_client import REGISTRY, CollectorRegistry, Counter, Histogram, generate_latest, multiprocess
from prometheus_client.core import GaugeMetricFamily
from prometheus_client.exposition import CONTENT_TYPE_LATEST

from ..domain.errors import ThreadforkError
from ..domain.model import ForkStatus

log = logging.getLogger(__name__)

CONTENT_TYPE = CONTENT_TYPE_LATEST  # text/plain; version=0.0.4

TURNS = Counter("threadfork_turns", "Answers written, by place (parent, fork) and outcome "
                "(answered, stopped, failed)", ["place", "outcome"])
MERGES = Counter("threadfork_merges", "Merges asked for, by gesture (reaction, button, shortcut, command, "
                 "mention, expiry) and outcome (merged, drafted, refused, failed)", ["gesture", "outcome"])
MODEL_REQUESTS = Counter("threadfork_model_requests", "Requests to Claude's Messages API (a paused turn's "
                         "continuation is one more)")
MODEL_TOKENS = Counter("threadfork_model_tokens", "Tokens Claude's API reported, by kind (input, output, "
                       "cache_read, cache_write_5m, cache_write_1h)", ["kind"])
SERVER_TOOLS = Counter("threadfork_server_tool_uses", "Claude's web searches and fetches", ["tool"])
SPEND = Counter("threadfork_estimated_spend_usd", "Estimated spend in USD, from reported usage at the price "
                "table's rates (not an invoice)")
UNPRICED = Counter("threadfork_unpriced_calls", "Model calls by a model the price table lacks (not in the spend)")
SLACK_CALLS = Counter("threadfork_slack_calls", "Slack Web API calls, by method and final outcome (ok, "
                      "ratelimited, Slack's error code, or the kind of connection failure)", ["method", "outcome"])
SLACK_RATELIMITED = Counter("threadfork_slack_ratelimited", "Slack's 429 answers, each one, retried or not",
                            ["method"])
DELIVERIES = Counter("threadfork_deliveries", "What Slack delivered: kept in the durable inbox before the ack, "
                     "then done", ["state"])
TAKEOVERS = Counter("threadfork_lease_takeovers", "Work whose holder stopped beating, taken over by a sweep "
                    "(delivery, reply, merge)", ["work"])
ACK_SECONDS = Histogram("threadfork_ack_seconds", "From a request's arrival to Slack's acknowledgement",
                        ["transport"], buckets=(.005, .01, .025, .05, .1, .25, .5, 1, 2, 3, 5))
FIRST_WORDS_SECONDS = Histogram("threadfork_first_words_seconds", "From an answer's start to its first "
                                "words visible in Slack", buckets=(.25, .5, 1, 2, 3, 5, 8, 13, 20, 30, 60))
ANSWER_SECONDS = Histogram("threadfork_answer_seconds", "From an answer's start to its last words posted",
                           buckets=(1, 2, 5, 10, 20, 30, 60, 120, 300, 600))


def _zeroes() -> None:
    """Every known series at 0 from the start: an alert on a rate sees the first event, and a scrape of a
    fresh worker (multiprocess mode shows only series that exist) lists every metric."""
    for where in ("parent", "fork"):
        for outcome in ("answered", "stopped", "failed"):
            TURNS.labels(where, outcome)
    for gesture in ("reaction", "button", "shortcut", "command", "mention", "expiry"):
        for outcome in ("merged", "drafted", "refused", "failed"):
            MERGES.labels(gesture, outcome)
    for kind in ("input", "output", "cache_read", "cache_write_5m", "cache_write_1h"):
        MODEL_TOKENS.labels(kind)
    for transport in ("http", "socket_mode"):
        ACK_SECONDS.labels(transport)
    for state in ("kept", "done"):
        DELIVERIES.labels(state)
    for work in ("delivery", "reply", "merge"):
        TAKEOVERS.labels(work)
    SLACK_CALLS.labels("chat.postMessage", "ok")
    SLACK_RATELIMITED.labels("chat.postMessage")


_zeroes()


def place(session) -> str:
    return "fork" if session.fork else "parent"


def model_usage(usage) -> None:
    """One recorded model call's usage (bot/store/channels.py: every answer, summary, draft and compaction)."""
    hour = usage.cache_write_1h_tokens
    for kind, tokens in (("input", usage.input_tokens), ("output", usage.output_tokens),
                         ("cache_read", usage.cache_read_tokens), ("cache_write_5m", usage.cache_write_tokens - hour),
                         ("cache_write_1h", hour)):
        if tokens > 0:
            MODEL_TOKENS.labels(kind).inc(tokens)
    for tool, uses in (("web_search", usage.searches), ("web_fetch", usage.fetches)):
        if uses:
            SERVER_TOOLS.labels(tool).inc(uses)
    if usage.cost_micros:
        SPEND.inc(usage.cost_micros / 1_000_000)
    if usage.unpriced:
        UNPRICED.inc(usage.unpriced)


def merge(gesture: str, merge_now, *args, **kwargs):
    """`merge_now(*args, **kwargs)` (a Forks.merge), counted by its gesture and outcome; raises what it raises."""
    try:
        fork = merge_now(*args, **kwargs)
    except ThreadforkError:
        MERGES.labels(gesture, "refused").inc()
        raise
    except Exception:
        MERGES.labels(gesture, "failed").inc()
        raise
    MERGES.labels(gesture, "drafted" if fork.status is ForkStatus.OPEN else "merged").inc()  # review on: a draft
    return fork


class _Backlog:
    """The queue as the database has it: turns waiting for an answer, deliveries kept but not yet done."""

    def __init__(self, read):
        self.read = read  # () -> {queue: (depth, oldest age in seconds or None)}

    def collect(self):
        depth = GaugeMetricFamily("threadfork_queue_depth", "Waiting now: turns without their answer, "
                                  "deliveries kept but not done", labels=["queue"])
        oldest = GaugeMetricFamily("threadfork_queue_oldest_seconds", "Age of the oldest one waiting (0: none)",
                                   labels=["queue"])
        try:
            figures = self.read()
        except Exception as error:  # noqa: BLE001 - a scrape reports what it can; /healthz says the rest
            log.warning("metrics: the queue could not be read (%s)", type(error).__name__)
            return
        for queue, (count, age) in figures.items():
            depth.add_metric([queue], count)
            oldest.add_metric([queue], age or 0.0)
        yield depth
        yield oldest


class _Scrape:
    def __init__(self, *collectors):
        self.collectors = collectors

    def collect(self):
        for collector in self.collectors:
            yield from collector.collect()


def exposition(read_backlog=None) -> bytes:
    """Every metric in Prometheus' text format: this process's, or with PROMETHEUS_MULTIPROC_DIR every
    worker's summed; and the queue, read now."""
    if os.environ.get("PROMETHEUS_MULTIPROC_DIR"):
        base = CollectorRegistry()
        multiprocess.MultiProcessCollector(base)
    else:
        base = REGISTRY
    return generate_latest(_Scrape(base, *([_Backlog(read_backlog)] if read_backlog else [])))

