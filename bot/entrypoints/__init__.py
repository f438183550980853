"""How a process runs the bot (started by `python -m bot`, bot/__main__.py): HTTP mode under gunicorn (server.py,
its WSGI app wsgi.py), Socket Mode (socket_mode.py) with its /healthz and /metrics (health.py), and the life
both share (runtime.py: build the wiring, start its sweep, drain and stop)."""
