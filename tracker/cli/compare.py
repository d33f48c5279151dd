"""``compare``: the cheapest $/GPU-hour per GPU model × provider for each pricing model,
the spot discount and the 7/30-day change (rows from :mod:`tracker.history.compare`)."""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Annotated, Any

import typer

from tracker.cli.context import open_store, settings_of
from tracker.cli.history import gpu_selection, usage_errors
from tracker.cli.output import Column, FormatOption, OutputFormat, cell, emit, err, money
from tracker.history.compare import COMPARE_KEYS, compare_rows

__all__ = ["compare", "register"]


def _pct(value: Any) -> str:
    return "" if value is None else f"{cell(value)}%"


COMPARE_TABLE = (
    Column("gpu_model", "GPU"),
    Column("provider", "provider"),
    Column("on_demand", "on-demand", money, justify="right"),
    Column("spot", "spot", money, justify="right"),
    Column("reserved_1y", "1y", money, justify="right"),
    Column("reserved_3y", "3y", money, justify="right"),
    Column("spot_discount_pct", "spot off", _pct, justify="right"),
    Column("change_7d_pct", "7d", _pct, justify="right"),
    Column("change_30d_pct", "30d", _pct, justify="right"),
)


def compare(
    ctx: typer.Context,
    gpu: Annotated[
        list[str] | None,
        typer.Option("--gpu", "-g", help="GPU model or family (repeatable), e.g. H100."),
    ] = None,
    provider: Annotated[list[str] | None, typer.Option("--provider", "-p")] = None,
    fmt: FormatOption = OutputFormat.table,
) -> None:
    """Cheapest USD per GPU-hour now per GPU model × provider: on-demand, spot,
    reserved 1y/3y, spot discount, and the 7- and 30-day change of on-demand."""
    now = datetime.now(UTC).replace(microsecond=0)
    with usage_errors():
        engine = open_store(ctx)
        selection = gpu_selection(engine, gpu) if gpu else None
        rows = compare_rows(
            engine,
            now=now,
            gpu=selection,
            provider=provider,
            fx_rates=settings_of(ctx).fx_rates,
        )
    if not rows:
        err("no offer with a current price matches these filters")
    emit(
        rows,
        fmt,
        columns=COMPARE_KEYS,
        table=COMPARE_TABLE,
        title="USD per GPU-hour, cheapest offer now",
    )


def register(app: typer.Typer) -> None:
    app.command("compare")(compare)
