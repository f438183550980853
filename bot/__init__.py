"""Threadfork: Claude in Slack, where the channel is the parent session and threads are forks."""
