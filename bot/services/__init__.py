"""Use cases, one class per concern, wired by `facade.Services`; they reach Slack, Claude and the
database only through the protocols in `ports`."""
