"""The bench's baseline: a minimal Claude bot for Slack with no database (see app.py)."""
