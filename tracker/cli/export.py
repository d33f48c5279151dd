"""``export``: stored price intervals joined with their offers, to a CSV or Parquet
file for analysts (written in batches by :mod:`tracker.history.export`).

Each interval carries its USD figure at the exchange rate in force when it began;
``--currency C`` adds ``display_currency`` and ``display_price_per_hour`` (the price in
C at that rate); discounts configured add the net price under the rule in force then.
Intervals without a figure for want of a rate stay in the file (the price is stored
data) and are counted on stderr."""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Sequence
from datetime import UTC, datetime
from decimal import Decimal
from pathlib import Path
from typing import Annotated, Any

import typer

from tracker.cli.context import open_store, settings_of
from tracker.cli.currency import CurrencyOption, CurrencyView, currency_view
from tracker.cli.history import gpu_selection, usage_errors
from tracker.cli.names import check_providers, check_regions
from tracker.cli.output import err
from tracker.fx import USD
from tracker.history import args as history_args
from tracker.history.files import ExportFormat, check_writable, export_format
from tracker.models import PricingModel
from tracker.store.reads import EXPORT_COLUMNS, SeriesFilter, export_batches

__all__ = ["export", "in_view", "register"]

Batch = Sequence[tuple[Any, ...]]
_PRICE, _CURRENCY, _USD, _BEGAN = (
    EXPORT_COLUMNS.index(c)
    for c in ("price_per_hour", "currency", "price_per_hour_usd", "first_seen")
)
_KEY = tuple(EXPORT_COLUMNS.index(c) for c in ("provider", "pricing", "instance_type", "region"))


def _figure(view: CurrencyView, row: tuple[Any, ...]) -> Decimal | None:
    """The interval's price in the view currency when it began, or None (counted: under
    the view currency if that had no rate yet, else under the interval's own)."""
    price, currency, usd, began = row[_PRICE], row[_CURRENCY], row[_USD], row[_BEGAN]
    if currency == view.code:
        return price  # type: ignore[no-any-return]
    shown = None if usd is None else view.show(usd, at=began)
    if shown is None:
        lacking = view.code if view.rates.usd_per_unit(view.code, began) is None else currency
        view.usd.missing[lacking] += 1
    return shown


def _net(view: CurrencyView, row: tuple[Any, ...]) -> tuple[Any, ...]:
    """The interval's :data:`NET_COLUMNS` under the rule in force when it began."""
    key = (row[_KEY[0]], str(row[_KEY[1]]), row[_KEY[2]], row[_KEY[3]])
    net = view.discounts.net(key, row[_PRICE], row[_CURRENCY], row[_USD], row[_BEGAN])
    return (net.price_per_hour, net.price_per_hour_usd, net.rule)


def in_view(batches: Iterable[Batch], view: CurrencyView) -> Iterator[list[tuple[Any, ...]]]:
    """The batches with the view currency's columns (none for USD), then the net ones
    when discounts are configured, counting in ``view`` the intervals without a figure."""
    for batch in batches:
        if view.code == USD:
            view.usd.missing.update(row[_CURRENCY] for row in batch if row[_USD] is None)
            rows = list(batch)
        else:
            rows = [(*row, view.code, _figure(view, row)) for row in batch]
        if view.discounts:
            rows = [(*shown, *_net(view, row)) for shown, row in zip(rows, batch, strict=True)]
        yield rows


def export(
    ctx: typer.Context,
    file: Annotated[Path, typer.Argument(help="Destination .csv or .parquet file.")],
    since: Annotated[
        str,
        typer.Option(
            "--since", help="Start: an age (30d, 12h, 2w), today, yesterday, or an ISO date/time."
        ),
    ],
    until: Annotated[
        str | None, typer.Option("--until", help="End: now, or as --since (default: now).")
    ] = None,
    gpu: Annotated[
        list[str] | None,
        typer.Option("--gpu", "-g", help="GPU model or family (repeatable), e.g. H100."),
    ] = None,
    provider: Annotated[list[str] | None, typer.Option("--provider", "-p")] = None,
    region: Annotated[list[str] | None, typer.Option("--region", "-r")] = None,
    pricing: Annotated[list[PricingModel] | None, typer.Option("--pricing")] = None,
    currency: CurrencyOption = USD,
    fmt: Annotated[
        ExportFormat | None,
        typer.Option("--format", "-f", help="csv or parquet (default: from FILE's suffix)."),
    ] = None,
) -> None:
    """Price intervals in force between --since and --until, with their offers (USD, and
    --currency, at the exchange rate in force when each interval began)."""
    now = datetime.now(UTC).replace(microsecond=0)
    with usage_errors():
        chosen = export_format(file, fmt)
        window = history_args.parse_window(since, until, now=now)
        check_writable(file, "FILE")
        check_regions(region)
        engine = open_store(ctx)
        check_providers(ctx, engine, provider)
        view = currency_view(ctx, engine, currency)
        where = SeriesFilter(
            gpu=gpu_selection(engine, gpu) if gpu else None,
            provider=provider,
            region=region,
            pricing=pricing,
        )
        from tracker.history.export import (  # pyarrow: on use
            DISPLAY_COLUMNS,
            NET_COLUMNS,
            write_export,
        )

        batches = export_batches(
            engine, where, window.since, window.until, fx_rates=settings_of(ctx).fx_rates
        )
        columns = EXPORT_COLUMNS if view.code == USD else (*EXPORT_COLUMNS, *DISPLAY_COLUMNS)
        columns = (*columns, *NET_COLUMNS) if view.discounts else columns
        rows = write_export(file, chosen, in_view(batches, view), columns)
    line = view.missing_line("interval")
    if line:
        err(f"gpu-tracker: {line}")
    err(f"exported {rows} intervals to {file}")


def register(app: typer.Typer) -> None:
    app.command("export")(export)
