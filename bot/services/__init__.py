"""Use cases, one class per concern, made by bot/app.py `wire_services` (each given only the ports it
uses); they reach Slack, Claude and the database only through the protocols in `ports`."""
