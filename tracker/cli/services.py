"""``services`` (storage and transfer prices) and the import of a service price sheet."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from collectors.base import CollectorError
from collectors.service_sheet import is_service_sheet
from tracker.cli.context import CliError, open_store
from tracker.cli.output import Column, FormatOption, OutputFormat, emit, err
from tracker.collect_services import import_service_sheet
from tracker.service_prices import ServiceKind
from tracker.store.engine import DatabaseError, Engine
from tracker.store.service_prices import service_prices

__all__ = ["import_services", "register", "sheet_of_service_prices"]

SERVICE_COLUMNS = (
    "provider",
    "region",
    "service",
    "unit",
    "tier_start_gb",
    "tier_end_gb",
    "price",
    "currency",
    "source",
    "since",
    "last_seen",
)
SERVICE_TABLE = (
    Column("provider", "provider"),
    Column("region", "region"),
    Column("service", "service"),
    Column("tier_start_gb", "from GB", justify="right", priority=2),
    Column("tier_end_gb", "to GB", justify="right", priority=1),
    Column("price", "price", justify="right"),
    Column("currency", "cur."),
    Column("unit", "per"),
)


def sheet_of_service_prices(path: Path) -> bool:
    """Whether ``import`` should read ``path`` as service prices (its ``service`` column).
    A file that cannot be read is left to the offer import, which reports it."""
    try:
        return is_service_sheet(path)
    except CollectorError:
        return False


def import_services(engine: Engine, path: Path, *, source: str, full: bool) -> None:
    """Import a service price sheet; exit 1 when it failed or a row was rejected."""
    try:
        summary = import_service_sheet(
            engine, path, provider="pricesheet", source=source, complete=full
        )
    except DatabaseError as exc:
        raise CliError(str(exc)) from None
    for detail in summary.skip_details:
        err(f"{source}: skipped {detail}")
    if summary.error:
        raise CliError(f"import failed: {summary.error}")
    s = summary.stats
    typer.echo(
        f"{source}: {s.offers_seen} service prices read: {s.new_series} new, "
        f"{s.price_changes} changed, {s.unchanged} unchanged, {s.delisted} ended"
    )
    if summary.skipped:
        raise CliError(f"{summary.skipped} row(s) of {path} rejected; the other rows were loaded")


def services(
    ctx: typer.Context,
    provider: Annotated[list[str] | None, typer.Option("--provider", "-p")] = None,
    region: Annotated[list[str] | None, typer.Option("--region", "-r")] = None,
    service: Annotated[list[ServiceKind] | None, typer.Option("--service")] = None,
    fmt: FormatOption = OutputFormat.table,
) -> None:
    """Storage and internet egress prices in force (per GB-month, per GB sent), by tier."""
    engine = open_store(ctx)
    try:
        stored = service_prices(engine, provider=provider, region=region, service=service)
    except DatabaseError as exc:
        raise CliError(str(exc)) from None
    rows = [
        {
            "provider": s.price.provider,
            "region": s.price.region,
            "service": s.price.service,
            "unit": s.price.unit,
            "tier_start_gb": s.price.tier_start_gb,
            "tier_end_gb": s.price.tier_end_gb,
            "price": s.price.price,
            "currency": s.price.currency,
            "source": s.source,
            "since": s.since,
            "last_seen": s.last_seen,
        }
        for s in stored
    ]
    if not rows and fmt is OutputFormat.table:
        err("no service prices stored for these filters (import a sheet with a service column)")
    emit(rows, fmt, columns=SERVICE_COLUMNS, table=SERVICE_TABLE, title="service prices")


def register(app: typer.Typer) -> None:
    app.command("services")(services)
