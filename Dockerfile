# Threadfork's image. HTTP mode (production, SLACK_APP_TOKEN unset): POST /slack/events, GET /healthz and
# GET /metrics on $PORT. Socket Mode (SLACK_APP_TOKEN set): /healthz and /metrics on $THREADFORK_HEALTH_PORT.
# The base is pinned to a patch version; pin its digest too (python:3.11.13-slim-bookworm@sha256:…) where
# builds must be reproducible byte for byte, and move both on with each Python security release.
FROM python:3.11.13-slim-bookworm

ENV PYTHONDONTWRITEBYTECODE=1 \
    PYTHONUNBUFFERED=1 \
    PIP_DISABLE_PIP_VERSION_CHECK=1 \
    PORT=3000 \
    THREADFORK_HEALTH_PORT=3001 \
    DATABASE_URL=sqlite:////app/data/threadfork.db

WORKDIR /app
RUN useradd --create-home --uid 10001 threadfork

# the dependencies in a layer of their own, read from pyproject.toml alone: a change of the code reuses it
COPY pyproject.toml ./
RUN python -c "import tomllib; print('\n'.join(tomllib.load(open('pyproject.toml', 'rb'))['project']['dependencies']))" \
      > /tmp/requirements.txt \
    && pip install --no-cache-dir -r /tmp/requirements.txt \
    && rm /tmp/requirements.txt

# then the code, installed without touching the dependencies
COPY README.md ./
COPY bot ./bot
RUN pip install --no-cache-dir --no-deps . \
    && mkdir -p /app/data \
    && chown threadfork:threadfork /app/data

USER threadfork
EXPOSE 3000 3001
VOLUME ["/app/data"]
# /healthz on the port the mode serves it on: PORT over HTTP, THREADFORK_HEALTH_PORT in Socket Mode
HEALTHCHECK --interval=30s --timeout=3s --start-period=30s --retries=3 \
  CMD ["python", "-c", "import os, urllib.request; port = os.environ.get('THREADFORK_HEALTH_PORT', '3001') if os.environ.get('SLACK_APP_TOKEN') else os.environ.get('PORT', '3000'); urllib.request.urlopen('http://127.0.0.1:%s/healthz' % port, timeout=2)"]

CMD ["python", "-m", "bot"]
