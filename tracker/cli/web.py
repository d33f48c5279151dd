"""``gpu-tracker web``: the dashboard and /api/v1 alone (no scheduler), over any database.

For a read replica, a laptop with a copy of the SQLite file, or a second process
beside ``serve``. It binds 127.0.0.1 unless told otherwise; to expose it, set a
token (``GPU_TRACKER_WEB__TOKEN``) and put TLS in front (docs/deploy.md): another
address without a token refuses to start unless ``web.allow_public`` says so.
"""

from __future__ import annotations

import logging
import threading
from typing import Annotated

import typer

from tracker.cli.context import USAGE, CliError, open_store, settings_of
from tracker.cli.serve import LogFormat

__all__ = ["register", "web"]


def web(
    ctx: typer.Context,
    http: Annotated[
        str | None,
        typer.Option(
            "--http",
            metavar="HOST:PORT",
            help="Where to listen [default: web.http, 127.0.0.1:8080].",
        ),
    ] = None,
    log_format: Annotated[
        LogFormat, typer.Option("--log-format", help="text, or json: one object per line.")
    ] = LogFormat.text,
    log_level: Annotated[str, typer.Option("--log-level", help="DEBUG, INFO, WARNING…")] = "INFO",
) -> None:
    """Serve the read-only dashboard and JSON API until interrupted (Ctrl-C)."""
    import signal

    from tracker.service.logs import configure_logging
    from tracker.service.web import WebServer, parse_address
    from tracker.settings import ConfigError
    from tracker.web import WebContext, create_app
    from tracker.web.health import RunLogHealth

    settings = settings_of(ctx)
    address = http if http is not None else settings.web.http
    level = log_level.upper()
    if not isinstance(logging.getLevelName(level), int):
        raise CliError(f"--log-level: unknown level {log_level!r}", USAGE)
    try:
        host, _ = parse_address(address)
        configure_logging(settings, fmt=log_format.value, level=level)
        token = settings.web.resolved_token()
        public = settings.web.public_warning(host)  # refuses an open public address
    except (ConfigError, ValueError) as exc:
        raise CliError(
            f"--http: {exc}" if isinstance(exc, ValueError) else str(exc), USAGE
        ) from None
    if public:
        logging.getLogger(__name__).warning("%s", public)
    engine = open_store(ctx)
    health = RunLogHealth(settings, engine)
    app = create_app(WebContext(settings, engine, health.routes(), health.report, host=host))
    try:
        server = WebServer(address, app)
    except OSError as exc:
        raise CliError(f"cannot serve on {address}: {exc.strerror}", USAGE) from None
    stop = threading.Event()
    for sig in (signal.SIGTERM, signal.SIGINT):
        signal.signal(sig, lambda *_: stop.set())
    server.start()
    logging.getLogger(__name__).info(
        "dashboard on %s (%s)",
        server.url,
        "token required" if token else "no token" if public else "no token: local use",
    )
    while not stop.wait(0.5):
        pass
    server.stop()
    engine.dispose()


def register(app: typer.Typer) -> None:
    app.command("web")(web)
