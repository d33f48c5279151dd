"""``gpu-tracker serve``: the scheduler service (see :mod:`tracker.service`)."""

from __future__ import annotations

import logging
import os
import sys
from enum import StrEnum
from typing import Annotated

import typer

from tracker.cli.context import USAGE, CliError, open_store, settings_of
from tracker.settings import Settings

__all__ = ["register", "serve"]


class LogFormat(StrEnum):
    text = "text"
    json = "json"


def serve(
    ctx: typer.Context,
    once: Annotated[
        bool, typer.Option("--once", help="Run every due job once and exit (for cron).")
    ] = False,
    http: Annotated[
        str | None,
        typer.Option(
            "--http",
            metavar="HOST:PORT",
            help="Where /livez, /readyz, /healthz and /metrics listen "
            "[default: scheduler.http, 127.0.0.1:8080]; '' disables them.",
        ),
    ] = None,
    log_format: Annotated[
        LogFormat, typer.Option("--log-format", help="text, or json: one object per line.")
    ] = LogFormat.text,
    log_level: Annotated[str, typer.Option("--log-level", help="DEBUG, INFO, WARNING…")] = "INFO",
    collector: Annotated[
        list[str] | None,
        typer.Option(
            "--collector",
            help="Schedule only this collector (repeatable) [default: scheduler.collectors].",
        ),
    ] = None,
) -> None:
    """Run every configured collector on its cadence, with health endpoints and /metrics."""
    from tracker.service.logs import configure_logging
    from tracker.service.scheduler import Service
    from tracker.serving import service_app
    from tracker.settings import ConfigError
    from tracker.store import DatabaseError

    settings = settings_of(ctx)
    if collector:
        settings.scheduler.collectors = list(collector)
    level = log_level.upper()
    if not isinstance(logging.getLevelName(level), int):
        raise CliError(f"--log-level: unknown level {log_level!r}", USAGE)
    if settings.database_url.startswith("sqlite"):
        open_store(ctx)  # the embedded default is created and migrated on first use
    # A server database may be down right now: the service starts anyway and
    # reports it on /healthz until it is back.
    try:
        address = settings.scheduler.http if http is None else http
        public = None if once else _dashboard_exposure(settings, address)  # before any job
        configure_logging(settings, fmt=log_format.value, level=level)
        service = Service(settings, http=http, http_app=service_app)
    except (ConfigError, DatabaseError, ValueError) as exc:
        raise CliError(str(exc), USAGE) from None
    if public:
        logging.getLogger(__name__).warning("%s", public)
    if once:
        sys.exit(service.run_once())  # SystemExit: the code must reach the shell as is
    try:
        code = service.run_forever()
    except OSError as exc:  # typically the health port is taken
        service.stop(timeout=0)
        raise CliError(f"cannot serve on {service.http_address}: {exc.strerror}", USAGE) from None
    if service.abandoned:
        # Worker threads are joined at interpreter exit; a collection stuck in a
        # provider call would hold the process past the bounded shutdown. Its
        # transaction is uncommitted, so ending the process rolls it back.
        logging.shutdown()
        sys.stderr.flush()
        os._exit(code)
    sys.exit(code)


def _dashboard_exposure(settings: Settings, address: str) -> str | None:
    """The dashboard's start-up checks, before any job runs: a blank or short token,
    or a public address without a token, is a ConfigError; the WARNING line of an
    address ``web.allow_public`` opens, or None."""
    if not address or not settings.web.enabled:
        return None  # the probes alone: no prices, plans or alerts to guard
    from tracker.service.web import parse_address

    settings.web.resolved_token()
    return settings.web.public_warning(parse_address(address)[0])


def register(app: typer.Typer) -> None:
    app.command("serve")(serve)
