"""The plumbing any layer may use, importing no layer above it: logs, metrics, the listener pool (drain.py),
the process's scheduler and its delayed calls, the TLS context."""
