"""Process life around the bot: logs, metrics, health."""
