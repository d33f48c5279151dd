"""The ``gpu-tracker`` command line.

Each sub-module registers its commands on :data:`app`; :func:`main` is the entry
point and the one place that turns failures into a single stderr line and an exit
code (2 for usage errors, 1 for failures), never a traceback.
"""

from __future__ import annotations

import logging
import sys
from pathlib import Path
from typing import Annotated

import typer
from typer.exceptions import TyperException

from tracker import __version__
from tracker.cli import alerts as alert_commands
from tracker.cli import calibrate as calibrate_commands
from tracker.cli import collect as collect_commands
from tracker.cli import compare as compare_commands
from tracker.cli import db as db_commands
from tracker.cli import discounts as discount_commands
from tracker.cli import export as export_commands
from tracker.cli import history as history_commands
from tracker.cli import mcp as mcp_commands
from tracker.cli import offers as offer_commands
from tracker.cli import plan as plan_commands
from tracker.cli import profiles as profile_commands
from tracker.cli import recommend as recommend_commands
from tracker.cli import serve as serve_commands
from tracker.cli import services as service_commands
from tracker.cli import web as web_commands
from tracker.cli.context import USAGE, CliError, State
from tracker.cli.output import err

__all__ = ["app", "main"]

app = typer.Typer(
    name="gpu-tracker",
    help="Track GPU cloud prices over time and pick the instance that makes your job cheapest.",
    no_args_is_help=True,
    pretty_exceptions_enable=False,
    rich_markup_mode=None,
    add_completion=False,
)


def _version(value: bool) -> None:
    if value:
        typer.echo(f"gpu-tracker {__version__}")
        raise typer.Exit()


@app.callback()
def _root(
    ctx: typer.Context,
    config: Annotated[
        Path | None,
        typer.Option("--config", "-c", help="TOML config file (default: $GPU_TRACKER_CONFIG)."),
    ] = None,
    database_url: Annotated[
        str | None,
        typer.Option(
            "--database-url", help="Overrides GPU_TRACKER_DATABASE_URL.", show_default=False
        ),
    ] = None,
    verbose: Annotated[
        int,
        typer.Option(
            "--verbose",
            "-v",
            count=True,
            help="-v info, -vv debug (libraries stay at WARNING: "
            "GPU_TRACKER_LOG_LEVELS=botocore=DEBUG asks for one).",
        ),
    ] = 0,
    version: Annotated[
        bool, typer.Option("--version", callback=_version, is_eager=True, help="Show the version.")
    ] = False,
) -> None:
    from tracker.service.logs import configure_logging

    level = logging.WARNING if verbose == 0 else logging.INFO if verbose == 1 else logging.DEBUG
    # Before anything can log: every command masks secrets and keeps the libraries
    # that print credentials at DEBUG quiet (State.settings() adds the settings' secrets).
    try:
        configure_logging(level=level, stream=sys.stderr, service=False)
    except ValueError as exc:
        raise CliError(str(exc), USAGE) from None
    ctx.obj = State(config=config, database_url=database_url)
    # The command's engines close with it: a caller running commands in one process
    # (tests, an embedding program) is left no connection pool per command.
    ctx.call_on_close(ctx.obj.close)


db_commands.register(app)
collect_commands.register(app)
offer_commands.register(app)
history_commands.register(app)
compare_commands.register(app)
discount_commands.register(app)
export_commands.register(app)
recommend_commands.register(app)
plan_commands.register(app)
service_commands.register(app)
profile_commands.register(app)
calibrate_commands.register(app)
serve_commands.register(app)
alert_commands.register(app)
web_commands.register(app)
mcp_commands.register(app)


def main(argv: list[str] | None = None) -> None:
    command = typer.main.get_command(app)
    try:
        # Without standalone mode a command's typer.Exit(code) comes back as the
        # return value instead of leaving the process: pass it on.
        code = command.main(args=argv, prog_name="gpu-tracker", standalone_mode=False)
    except typer.Exit as exc:
        sys.exit(exc.exit_code)
    except typer.Abort:
        err("gpu-tracker: aborted")
        sys.exit(130)
    except TyperException as exc:  # usage errors (bad option, missing argument, bad value)
        if type(exc).__name__ == "NoArgsIsHelpError":  # a bare group: show its help as is
            err(exc.format_message())
        else:
            err(f"gpu-tracker: error: {' '.join(exc.format_message().split())}")
        sys.exit(exc.exit_code if exc.exit_code else USAGE)
    except CliError as exc:
        err(f"gpu-tracker: error: {exc}")
        sys.exit(exc.code)
    except BrokenPipeError:
        sys.exit(0)
    sys.exit(code if isinstance(code, int) else 0)
