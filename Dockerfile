# gpu-tracker: the `gpu-tracker` CLI; `serve` by default (see docker-compose.yml).
# Two stages so the runtime image holds the installed package and nothing that built it.

FROM python:3.11-slim AS build
ENV PIP_NO_CACHE_DIR=1 PIP_DISABLE_PIP_VERSION_CHECK=1
WORKDIR /src
COPY . .
# Runtime dependencies only: no [test] extra. psycopg[binary] ships its own libpq.
RUN python -m venv /opt/venv && /opt/venv/bin/pip install .

FROM python:3.11-slim
RUN useradd --system --uid 10001 --user-group --create-home --home-dir /home/tracker tracker
COPY --from=build /opt/venv /opt/venv
ENV PATH=/opt/venv/bin:$PATH \
    PYTHONUNBUFFERED=1 \
    PYTHONDONTWRITEBYTECODE=1
USER tracker
WORKDIR /home/tracker
EXPOSE 8080
# /healthz answers 503 when the database is unreachable or a collector is stale;
# urlopen raises on it, so the probe fails. No curl in a slim image: Python does it.
HEALTHCHECK --interval=30s --timeout=10s --start-period=30s --retries=3 \
    CMD ["python", "-c", "import urllib.request; urllib.request.urlopen('http://127.0.0.1:8080/healthz', timeout=8)"]
ENTRYPOINT ["gpu-tracker"]
CMD ["serve", "--http", "0.0.0.0:8080", "--log-format", "json"]
