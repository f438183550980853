"""Local HTTP servers speaking Slack's Web API and Anthropic's Messages API wire formats."""
