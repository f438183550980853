"""`python -m bench.baseline`: the baseline bot in HTTP mode on PORT, served as Threadfork serves
its HTTP mode, so that the bench compares the bots' work and not their servers."""
from __future__ import annotations

import logging
import os

from bot.config import LOG_FORMAT
from bot.entrypoints.server import serve_wsgi

from .app import make_wsgi_app


def main() -> None:
    level = os.environ.get("LOG_LEVEL", "INFO")
    logging.basicConfig(level=level.upper(), format=LOG_FORMAT)
    serve_wsgi(make_wsgi_app, os.environ.get("HOST", "0.0.0.0"), int(os.environ.get("PORT", "3000")), level)


if __name__ == "__main__":
    main()
