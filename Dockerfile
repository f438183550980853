# Threadfork in HTTP mode (production): POST /slack/events, GET /healthz on $PORT.
FROM python:3.11-slim

ENV PYTHONDONTWRITEBYTECODE=1 \
    PYTHONUNBUFFERED=1 \
    PORT=3000 \
    DATABASE_URL=sqlite:////app/data/threadfork.db

WORKDIR /app
RUN useradd --create-home --uid 10001 threadfork

COPY pyproject.toml README.md ./
COPY bot ./bot
RUN pip install --no-cache-dir . \
    && mkdir -p /app/data \
    && chown threadfork:threadfork /app/data

USER threadfork
EXPOSE 3000
VOLUME ["/app/data"]
HEALTHCHECK --interval=30s --timeout=3s --start-period=20s --retries=3 \
  CMD python -c "import os, urllib.request; urllib.request.urlopen('http://127.0.0.1:%s/healthz' % os.environ.get('PORT', '3000'), timeout=2)" || exit 1

CMD ["python", "-m", "bot"]
