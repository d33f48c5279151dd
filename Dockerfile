# gpu-tracker: the `gpu-tracker` CLI; `serve` by default (see docker-compose.yml).
# Two stages so the runtime image holds the installed package and nothing that built it.
#
# Base: python:3.11-slim pinned to its multi-arch index digest, the one public projects
# pin (one dated "multi-arch index, 2026-08-16"); found with a public code search, not
# pulled here (no Docker engine). To move on: docker buildx imagetools inspect
# python:3.11-slim, then replace the digest in both FROM lines.

FROM python:3.11-slim@sha256:9c900dea9e8fb7e16277c179b555cc72d29a352dbc33cff48ad5a0412fd5bfc7 AS build
ENV PIP_NO_CACHE_DIR=1 PIP_DISABLE_PIP_VERSION_CHECK=1
WORKDIR /src
# Runtime dependencies only (no [test] extra), every file checked against the hashes
# in the lock (see README, Development). psycopg[binary] ships its own libpq.
COPY requirements.lock .
RUN python -m venv /opt/venv \
    && /opt/venv/bin/pip install --require-hashes --no-deps -r requirements.lock
COPY . .
# The project itself: nothing resolved again, built with the locked setuptools.
RUN /opt/venv/bin/pip install --no-deps --no-build-isolation . \
    && /opt/venv/bin/pip uninstall -y -q wheel

FROM python:3.11-slim@sha256:9c900dea9e8fb7e16277c179b555cc72d29a352dbc33cff48ad5a0412fd5bfc7
RUN useradd --system --uid 10001 --user-group --create-home --home-dir /home/tracker tracker
COPY --from=build /opt/venv /opt/venv
ENV PATH=/opt/venv/bin:$PATH \
    PYTHONUNBUFFERED=1 \
    PYTHONDONTWRITEBYTECODE=1
USER tracker
WORKDIR /home/tracker
EXPOSE 8080
# /livez fails only when the process no longer schedules jobs: a cloud API or the
# database being down must not get the container restarted (that is /readyz's and
# /healthz's verdict, for monitoring). No curl in a slim image: Python does it.
HEALTHCHECK --interval=30s --timeout=10s --start-period=30s --retries=3 \
    CMD ["python", "-c", "import urllib.request; urllib.request.urlopen('http://127.0.0.1:8080/livez', timeout=8)"]
ENTRYPOINT ["gpu-tracker"]
CMD ["serve", "--http", "0.0.0.0:8080", "--log-format", "json"]
