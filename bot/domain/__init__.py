"""The pure core of Threadfork: sessions, forks, context assembly, merge rules.

Nothing here performs I/O or imports Slack, Anthropic, SQLAlchemy or APScheduler;
adapters around it do. A fork is a pointer (parent session + fork-point seq), never a copy.
"""
