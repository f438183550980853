"""The Slack adapter: Bolt listeners (thin), rendering, and the outbound gateway."""
