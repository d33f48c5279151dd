"""``collect``, ``import``, ``providers`` and ``runs``: getting prices in."""

from __future__ import annotations

import logging
import sys
from collections.abc import Iterator, Mapping
from contextlib import ExitStack, contextmanager, nullcontext
from pathlib import Path
from typing import Annotated, Any

import typer
from rich.console import Console
from rich.progress import Progress, SpinnerColumn, TextColumn, TimeElapsedColumn

from collectors.base import ALL_PRICING, NotConfigured, collects_services
from collectors.pricesheet import PriceSheetCollector
from tracker import registry
from tracker.cli.context import MAX_ROWS, USAGE, CliError, open_store, settings_of
from tracker.cli.names import check_providers, unknown_provider
from tracker.cli.output import Column, FormatOption, OutputFormat, emit, err
from tracker.cli.services import (
    ServicesOnlyOption,
    ServicesOption,
    import_failed,
    import_services,
    rows_rejected,
    run_services,
    services_wanted,
    sheet_of_service_prices,
)
from tracker.collect import RUN_FAILED, OfferCallback, RunSummary, import_source, run_collector
from tracker.collect_services import SERVICES_SCOPE
from tracker.hooks import Origin, load_hooks
from tracker.models import PricingModel, RunStatus
from tracker.service.jobs import SPOT_SCOPE, STANDARD_SCOPE
from tracker.settings import Settings
from tracker.store import DatabaseError, Engine, JobLocks, locks_for
from tracker.views.health import run_rows

JOB_SCOPES = (SPOT_SCOPE, STANDARD_SCOPE)

NoHooksOption = Annotated[
    bool,
    typer.Option(
        "--no-hooks",
        help="Do not run the after-collection hooks (rankings recompute, plugins).",
    ),
]

NoNotifyOption = Annotated[
    bool,
    typer.Option(
        "--no-notify",
        help="Evaluate alert rules and queue alerts, but do not deliver them now "
        "('alerts send' or serve does).",
    ),
]


def _hold_jobs(held: ExitStack, locks: JobLocks, name: str) -> bool:
    """Take every job lock of collector ``name`` (the ones `serve` takes); False if one is held.

    So a manual run never overlaps a scheduled run of the same collector (on
    Postgres, across machines), and a scheduled run that finds this one committed
    within its cadence skips instead of repeating it.
    """
    return all(held.enter_context(locks.hold(f"{name}:{job}")) for job in JOB_SCOPES)


def _run_hooks(
    engine: Engine,
    settings: Settings,
    summaries: list[RunSummary],
    origin: Origin,
    *,
    notify: bool = True,
) -> bool:
    """The same after-collection hooks a scheduled run triggers, over the committed runs;
    a failed run's collector-health alerts at once.

    A rules file that cannot be used is one line on stderr (file, rule, key), and True
    (the command exits 1) after the runs were stored: their changes are evaluated
    once it is fixed.
    """
    from tracker.alerts.hook import after_failed_runs, no_notify, rules_problems

    committed = [s for s in summaries if s.status is RunStatus.SUCCEEDED]
    with nullcontext() if notify else no_notify(), rules_problems() as problems:
        if committed:
            load_hooks().after_collection(
                engine, settings, committed, origin, context=f"gpu-tracker {origin}"
            )
        if any(s.status is RunStatus.FAILED for s in summaries):
            try:
                after_failed_runs(engine, settings)
            except DatabaseError as exc:
                problems.append(f"collector-health alerts not evaluated: {exc}")
    for line in problems:
        err(f"gpu-tracker: error: {line}")
    return bool(problems)


@contextmanager
def _progress(label: str) -> Iterator[OfferCallback | None]:
    """A live offer counter on a terminal; nothing when output is piped."""
    if not sys.stderr.isatty():
        yield None
        return
    columns = (SpinnerColumn(), TextColumn("{task.description}"), TimeElapsedColumn())
    with Progress(*columns, console=Console(stderr=True), transient=True) as progress:
        task = progress.add_task(label, total=None)

        def update(n: int) -> None:
            if n % 500 == 0:
                progress.update(task, description=f"{label}: {n} offers")

        yield update


def _count(value: Any) -> str:
    return "" if value is None else f"{value:,}"


SUMMARY_TABLE = (
    Column("provider", "provider"),
    Column("source", "source", priority=3),
    Column("status", "status"),
    Column("scope", "scope", priority=4),
    Column("offers", "offers", _count, justify="right"),
    Column("new series", "new", _count, justify="right", priority=2),
    Column("price changes", "changed", _count, justify="right", priority=2),
    Column("delisted", "delisted", _count, justify="right", priority=2),
    Column("relisted", "relisted", _count, justify="right", priority=3),
    Column("skipped", "skipped", _count, justify="right", priority=1),
    Column("skip reasons", "skip reasons", priority=3, shrink=True, min_width=16),
    Column("error", "error", priority=1, shrink=True, min_width=20),
)
"""What a collect or import did, one row per run (the error in full is its last line)."""
PROVIDERS_TABLE = (
    Column("provider", "provider"),
    Column("configured", "configured", priority=3),
    Column("enabled", "enabled", priority=2),
    Column("status", "status", priority=1, shrink=True, min_width=24),
    Column("description", "description", priority=4, shrink=True, min_width=24),
)


def _took(row: Mapping[str, Any]) -> str:
    start, end = row.get("started_at"), row.get("finished_at")
    if start is None or end is None:
        return ""
    seconds = (end - start).total_seconds()
    return f"{seconds:.1f} s" if seconds < 100 else f"{seconds / 60:,.0f} min"


def _other_source(row: Mapping[str, Any]) -> str:
    """The source only where it says more than the provider (an import's name)."""
    return "" if row.get("source") == row.get("provider") else str(row.get("source") or "")


RUNS_TABLE = (
    Column("id", "id", justify="right", priority=5),
    Column("provider", "provider"),
    Column("", "source", _other_source, priority=3),
    Column("scope", "scope", priority=5),
    Column("status", "status"),
    Column("started_at", "started"),
    Column("", "took", _took, justify="right", priority=4),
    Column("offers_seen", "offers", _count, justify="right", priority=1),
    Column("new_series", "new", _count, justify="right", priority=3),
    Column("price_changes", "changed", _count, justify="right", priority=3),
    Column("delisted", "delisted", _count, justify="right", priority=4),
    Column("skipped", "skipped", _count, justify="right", priority=3),
    Column("error", "error", priority=2, shrink=True, min_width=24),
)
"""Why a run failed matters more than its counts: the error shortens only after the
counts gave way (the full text is in ``--format json``)."""
_COUNTS = {"offers_seen", "new_series", "price_changes", "delisted", "skipped"}
FAILED_RUNS_TABLE = tuple(c for c in RUNS_TABLE if c.key not in _COUNTS)
"""``runs --failed``: a failure stored nothing, so its row says why instead of counts."""


class _ReportedByCli(logging.Filter):
    """Drops the runner's log line of a failed run: the command says it once itself
    (the error line, and the summary's error column). ``-v`` keeps it, with its
    traceback where the failure was unexpected."""

    def filter(self, record: logging.LogRecord) -> bool:
        return record.msg != RUN_FAILED or logging.getLogger(record.name).isEnabledFor(logging.INFO)


@contextmanager
def _failures_reported_here() -> Iterator[None]:
    logger, only = logging.getLogger("tracker.collect"), _ReportedByCli()
    logger.addFilter(only)
    try:
        yield
    finally:
        logger.removeFilter(only)


def _failed(summaries: list[RunSummary]) -> CliError | None:
    """The command's error line when runs failed; None when all went through."""
    failed = [s for s in summaries if s.status == RunStatus.FAILED]
    if not failed:
        return None
    if len(failed) < len(summaries):
        return CliError(f"collection failed for: {', '.join(_run_name(s) for s in failed)}")
    more = f" (and {len(failed) - 1} more failed)" if len(failed) > 1 else ""
    return CliError(f"{_run_name(failed[0])}: collection failed: {failed[0].error}{more}")


def _run_name(summary: RunSummary) -> str:
    """The provider, or ``aws services`` for its storage and egress run."""
    services = summary.scope == SERVICES_SCOPE
    return f"{summary.provider} services" if services else summary.provider


def _report(summaries: list[RunSummary]) -> None:
    rows = []
    for s in summaries:
        rows.append(
            {
                "provider": s.provider,
                "source": s.source,
                "status": s.status,
                "scope": s.scope,
                "offers": s.stats.offers_seen,
                "new series": s.stats.new_series,
                "price changes": s.stats.price_changes,
                "delisted": s.stats.delisted,
                "relisted": s.stats.relisted,
                "skipped": s.skipped,
                "skip reasons": ", ".join(f"{k}={v}" for k, v in sorted(s.skip_reasons.items())),
                "error": s.error or "",
            }
        )
        for detail in s.skip_details:
            err(f"{s.provider}: skipped {detail}")
        if s.skipped > len(s.skip_details):
            err(f"{s.provider}: ... and {s.skipped - len(s.skip_details)} more skipped")
        for region, why in sorted(s.partial_regions.items()):
            err(f"{s.provider}: region {region} incomplete: {why}")
    # The source says something only when a run wrote for another one (an import).
    with_source = any(s.source != s.provider for s in summaries)
    table = [c for c in SUMMARY_TABLE if with_source or c.key != "source"]
    emit(rows, OutputFormat.table, table=table, title="collection runs")


def _pricing_scope(values: list[PricingModel] | None) -> frozenset[PricingModel]:
    return frozenset(values) if values else ALL_PRICING


def _offers_run(
    engine: Engine,
    locks: JobLocks,
    settings: Settings,
    collector: Any,
    scope: frozenset[PricingModel],
) -> RunSummary:
    """A collector's instance-price run, holding every job lock ``serve`` takes for it."""
    name = collector.name
    with ExitStack() as held, _progress(f"collecting {name}") as progress:
        try:
            free = _hold_jobs(held, locks, name)
        except DatabaseError as exc:
            raise CliError(str(exc)) from None
        if not free:
            err(f"{name}: skipped: a scheduled run of it is in progress")
            return RunSummary(provider=name, status=RunStatus.SKIPPED, error="locked")
        try:
            with _failures_reported_here():
                return run_collector(
                    engine, collector, settings, pricing_scope=scope, on_offer=progress
                )
        except DatabaseError as exc:
            raise CliError(str(exc)) from None


def _names(
    settings: Settings, provider: list[str] | None, services_only: bool
) -> tuple[dict[str, Any], list[str]]:
    """The collectors the command runs (``--services-only``: those that have prices)."""
    available = registry.available(settings)
    names = provider or [n for n in available if registry.enabled(settings, n)]
    unknown = [n for n in names if n not in available]
    if unknown:
        raise unknown_provider(unknown[0], available, what="registered collectors")
    if services_only:
        without = [n for n in names if not collects_services(available[n])]
        if provider and without:
            raise CliError(f"{without[0]}: collects no storage or egress prices", USAGE)
        names = [n for n in names if n not in without]
    return available, names


def collect(
    ctx: typer.Context,
    provider: Annotated[
        list[str] | None,
        typer.Option(
            "--provider", "-p", help="Collector to run (repeatable; default: all enabled)."
        ),
    ] = None,
    pricing: Annotated[
        list[PricingModel] | None,
        typer.Option("--pricing", help="Only these pricing models (repeatable)."),
    ] = None,
    services: ServicesOption = None,
    services_only: ServicesOnlyOption = False,
    no_hooks: NoHooksOption = False,
    no_notify: NoNotifyOption = False,
) -> None:
    """Run collectors now and store what changed. Exits 1 if any requested collector failed."""
    settings = settings_of(ctx)
    with_services = services_wanted(services, services_only, pricing)
    available, names = _names(settings, provider, services_only)
    engine = open_store(ctx)
    locks = locks_for(engine)
    scope = _pricing_scope(pricing)
    summaries: list[RunSummary] = []
    for name in names:
        try:
            collector = available[name].from_settings(settings)
        except Exception as exc:  # NotConfigured/MissingCredentials and plugin bugs alike
            status = RunStatus.SKIPPED if isinstance(exc, NotConfigured) else RunStatus.FAILED
            if status is RunStatus.SKIPPED:  # a failure is the command's error line
                err(f"{name}: {status}: {exc}")
            summaries.append(RunSummary(provider=name, status=status, error=str(exc)))
            continue
        if not services_only:
            summaries.append(_offers_run(engine, locks, settings, collector, scope))
        if with_services and collects_services(collector):
            summaries.append(run_services(engine, locks, settings, collector))
    failure = _failed(summaries)
    if failure is not None and all(s.status == RunStatus.FAILED for s in summaries):
        if not no_hooks:  # a failed run's collector-health alert goes out now
            _run_hooks(engine, settings, summaries, Origin.COLLECT, notify=not no_notify)
        raise failure  # nothing was collected: the error line is the whole answer
    _report(summaries)
    rules_broken = not no_hooks and _run_hooks(
        engine, settings, summaries, Origin.COLLECT, notify=not no_notify
    )
    if failure is not None:
        raise failure
    if rules_broken:
        raise typer.Exit(1)


def import_sheet(
    ctx: typer.Context,
    path: Annotated[Path, typer.Argument(help="CSV or JSON price sheet.")],
    full: Annotated[
        bool,
        typer.Option(
            "--full",
            help="The sheet is complete: delist this import's offers it no longer lists.",
        ),
    ] = False,
    source: Annotated[
        str | None,
        typer.Option(
            "--source",
            help="Name of this import (default: the file's name); stored as import:NAME. "
            "Importing under the same name again updates the same offers.",
        ),
    ] = None,
    no_hooks: NoHooksOption = False,
    no_notify: NoNotifyOption = False,
) -> None:
    """Load a price sheet (negotiated prices, history back-fill). Exits 1 if a row was rejected."""
    if not path.is_file():
        raise CliError(f"price sheet not found: {path}", USAGE)
    try:
        source_name = import_source(path.name if source is None else source)
    except ValueError as exc:
        raise CliError(f"--source: {exc}", USAGE) from None
    settings = settings_of(ctx)
    engine = open_store(ctx)
    if sheet_of_service_prices(path):
        import_services(engine, path, source=source_name, full=full)
        return
    collector = PriceSheetCollector(path, settings)
    with ExitStack() as held, _progress(f"importing {path.name}") as progress:
        try:
            if not _hold_jobs(held, locks_for(engine), collector.name):
                raise CliError(f"{path}: not imported: a run of {collector.name} is in progress")
            with _failures_reported_here():
                summary = run_collector(
                    engine,
                    collector,
                    settings,
                    delist=full,
                    source=source_name,
                    on_offer=progress,
                )
        except DatabaseError as exc:
            raise CliError(str(exc)) from None
    if summary.status == RunStatus.FAILED:  # nothing imported: the error line says why
        if not no_hooks:  # a failed run's collector-health alert goes out now
            _run_hooks(engine, settings, [summary], Origin.IMPORT, notify=not no_notify)
        raise import_failed(summary.error)
    _report([summary])
    rules_broken = not no_hooks and _run_hooks(
        engine, settings, [summary], Origin.IMPORT, notify=not no_notify
    )
    if summary.skipped:
        raise rows_rejected(summary.skipped, path, summary.stats.offers_seen)
    if rules_broken:
        raise typer.Exit(1)


def providers(ctx: typer.Context, fmt: FormatOption = OutputFormat.table) -> None:
    """Registered collectors, whether each is ready to run, and why not."""
    settings = settings_of(ctx)
    rows = [
        {
            "provider": s.name,
            "configured": s.configured,
            "enabled": registry.enabled(settings, s.name),
            "status": s.reason,
            "description": s.description,
        }
        for s in registry.status(settings)
    ]
    emit(rows, fmt, table=PROVIDERS_TABLE, title="providers")


def runs(
    ctx: typer.Context,
    provider: Annotated[str | None, typer.Option("--provider", "-p")] = None,
    source: Annotated[
        str | None,
        typer.Option("--source", help="Only runs for this source, e.g. import:deals.csv."),
    ] = None,
    limit: Annotated[int, typer.Option("--limit", "-n", min=1, max=MAX_ROWS)] = 20,
    failed: Annotated[
        bool,
        typer.Option("--failed", help="Only runs that failed or were abandoned, with the error."),
    ] = False,
    fmt: FormatOption = OutputFormat.table,
) -> None:
    """The collection-run log, newest first."""
    engine = open_store(ctx)
    check_providers(ctx, engine, [provider] if provider else None)
    statuses = (RunStatus.FAILED, RunStatus.ABANDONED) if failed else ()
    rows = run_rows(engine, provider, limit, source=source, statuses=statuses)
    if failed:
        emit(rows, fmt, table=FAILED_RUNS_TABLE, title="failed runs")
    else:
        emit(rows, fmt, table=RUNS_TABLE, title="collection runs")


def register(app: typer.Typer) -> None:
    app.command("collect")(collect)
    app.command("import")(import_sheet)
    app.command("providers")(providers)
    app.command("runs")(runs)


__all__ = ["register"]
