"""The Anthropic adapter: the one request encoder and the one streaming call (claude.py) and the start-up
model check (models.py). Nothing is imported here: the check runs in gunicorn's master, which must not import
prometheus-client before it has chosen the metrics' folder (bot/entrypoints/server.py)."""
