"""``services`` (storage and transfer prices), their runs in ``collect``, and the import
of a service price sheet."""

from __future__ import annotations

from contextlib import ExitStack
from pathlib import Path
from typing import Annotated, Any

import typer

from collectors.base import CollectorError
from collectors.service_sheet import is_service_sheet
from tracker.cli.context import USAGE, CliError, open_store
from tracker.cli.output import Column, FormatOption, OutputFormat, emit, err
from tracker.collect import RunSummary
from tracker.collect_services import SERVICES_SCOPE, import_service_sheet, run_service_collector
from tracker.models import PricingModel, RunStatus
from tracker.service_prices import ServiceKind
from tracker.settings import Settings
from tracker.store import DatabaseError, Engine, JobLocks
from tracker.store.series import service_prices

__all__ = [
    "ServicesOnlyOption",
    "ServicesOption",
    "import_failed",
    "import_services",
    "register",
    "rows_rejected",
    "run_services",
    "services_wanted",
    "sheet_of_service_prices",
]

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


ServicesOption = Annotated[
    bool | None,
    typer.Option(
        "--services/--no-services",
        help="Also refresh storage and egress prices (disks, internet egress: aws, azure, gcp) of "
        "the collectors that have them, after their instance prices "
        "(default: yes, unless --pricing narrows the run).",
    ),
]
ServicesOnlyOption = Annotated[
    bool,
    typer.Option("--services-only", help="Only storage and egress prices, no instance prices."),
]


def services_wanted(
    services: bool | None, services_only: bool, pricing: list[PricingModel] | None
) -> bool:
    """Whether the command runs service price runs; raises CliError (exit 2) when the
    options contradict each other."""
    if services_only and services is False:
        raise CliError("--services-only and --no-services contradict each other", USAGE)
    if services_only and pricing:
        raise CliError("--services-only collects no instance prices: drop --pricing", USAGE)
    return services_only or (services if services is not None else not pricing)


def run_services(engine: Engine, locks: JobLocks, settings: Settings, collector: Any) -> RunSummary:
    """A collector's storage and egress run, under the lock of its ``services`` job."""
    name = collector.name
    with ExitStack() as held:
        try:
            free = held.enter_context(locks.hold(f"{name}:{SERVICES_SCOPE}"))
        except DatabaseError as exc:
            raise CliError(str(exc)) from None
        if not free:
            err(f"{name}: services skipped: a scheduled run of them is in progress")
            return RunSummary(
                provider=name, status=RunStatus.SKIPPED, scope=SERVICES_SCOPE, error="locked"
            )
        try:
            return run_service_collector(engine, collector, settings)
        except DatabaseError as exc:
            raise CliError(str(exc)) from None


def sheet_of_service_prices(path: Path) -> bool:
    """Whether ``import`` should read ``path`` as service prices (its ``service`` column).
    A file that cannot be read is left to the offer import, which reports it."""
    try:
        return is_service_sheet(path)
    except CollectorError:
        return False


def rows_rejected(skipped: int, path: Path, loaded: int) -> CliError:
    """An import that stored its good rows and refused ``skipped``: how many of each."""
    stored = (
        "no row was loaded"
        if loaded == 0
        else "1 other row was loaded"
        if loaded == 1
        else f"{loaded} other rows were loaded"
    )
    return CliError(f"{skipped} row(s) of {path} rejected; {stored}")


def import_failed(error: str | None) -> CliError:
    """An import whose run failed: its transaction stored nothing, and the line says so."""
    return CliError(f"import failed: {error}; nothing was loaded")


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
        raise import_failed(summary.error)
    s = summary.stats
    typer.echo(
        f"{source}: {s.offers_seen} service prices read: {s.new_series} new, "
        f"{s.price_changes} changed, {s.unchanged} unchanged, {s.delisted} ended"
    )
    if summary.skipped:
        raise rows_rejected(summary.skipped, path, s.offers_seen)


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
        err(
            "no service prices stored for these filters (run `gpu-tracker collect "
            "--services-only`, or import a sheet with a service column)"
        )
    emit(rows, fmt, columns=SERVICE_COLUMNS, table=SERVICE_TABLE, title="service prices")


def register(app: typer.Typer) -> None:
    app.command("services")(services)
