"""`python -m bench.baseline`: the baseline bot in HTTP mode on PORT, served as Threadfork serves
its HTTP mode, so that the bench compares the bots' work and not their servers."""
from __future__ import annotations

import logging
import os

from .app import make_wsgi_app


def serve(app, host: str, port: int) -> None:
    """Threadfork's HTTP server: bot/http.py `make_server` runs waitress with 16 threads. When
    Threadfork's serving entry point changes, this is the one line to change with it."""
    from waitress import create_server

    create_server(app, host=host, port=port, threads=16, ident="baseline").run()


def main() -> None:
    logging.basicConfig(level=os.environ.get("LOG_LEVEL", "INFO").upper(),
                        format="%(asctime)s %(levelname)s %(name)s: %(message)s")
    serve(make_wsgi_app(), os.environ.get("HOST", "0.0.0.0"), int(os.environ.get("PORT", "3000")))


if __name__ == "__main__":
    main()
