"""``export``: stored price intervals joined with their offers, to a CSV or Parquet
file for analysts (written in batches by :mod:`tracker.history.export`)."""

from __future__ import annotations

from datetime import UTC, datetime
from pathlib import Path
from typing import Annotated

import typer

from tracker.cli.context import open_store, settings_of
from tracker.cli.history import gpu_selection, usage_errors
from tracker.cli.output import err
from tracker.history import args as history_args
from tracker.history.files import ExportFormat, check_writable, export_format
from tracker.models import PricingModel
from tracker.store.history import SeriesFilter, export_batches

__all__ = ["export", "register"]


def export(
    ctx: typer.Context,
    file: Annotated[Path, typer.Argument(help="Destination .csv or .parquet file.")],
    since: Annotated[str, typer.Option("--since", help="Start: 30d, 12h, 2w ago, or a date/time.")],
    until: Annotated[
        str | None, typer.Option("--until", help="End: as --since (default: now).")
    ] = None,
    gpu: Annotated[
        list[str] | None,
        typer.Option("--gpu", "-g", help="GPU model or family (repeatable), e.g. H100."),
    ] = None,
    provider: Annotated[list[str] | None, typer.Option("--provider", "-p")] = None,
    region: Annotated[list[str] | None, typer.Option("--region", "-r")] = None,
    pricing: Annotated[list[PricingModel] | None, typer.Option("--pricing")] = None,
    fmt: Annotated[
        ExportFormat | None,
        typer.Option("--format", "-f", help="csv or parquet (default: from FILE's suffix)."),
    ] = None,
) -> None:
    """Price intervals in force between --since and --until, with their offers."""
    now = datetime.now(UTC).replace(microsecond=0)
    with usage_errors():
        chosen = export_format(file, fmt)
        window = history_args.parse_window(since, until, now=now)
        check_writable(file, "FILE")
        engine = open_store(ctx)
        where = SeriesFilter(
            gpu=gpu_selection(engine, gpu) if gpu else None,
            provider=provider,
            region=region,
            pricing=pricing,
        )
        from tracker.history.export import write_export  # pyarrow: only when exporting

        batches = export_batches(
            engine, where, window.since, window.until, fx_rates=settings_of(ctx).fx_rates
        )
        rows = write_export(file, chosen, batches)
    err(f"exported {rows} intervals to {file}")


def register(app: typer.Typer) -> None:
    app.command("export")(export)
