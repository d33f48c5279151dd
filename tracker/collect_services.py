"""Runs that load storage and transfer prices: a collector's, or a service price sheet.

Recorded in ``collection_runs`` like every run (scope ``services``), stored with its
success in one transaction, so a failed or interrupted run leaves nothing half
written and the run log says what happened. A collector's run is complete (a tier the
provider no longer lists is ended, except in the regions it marked partial); a sheet
is complete only when imported with ``--full``.
"""

from __future__ import annotations

import logging
from collections import Counter
from collections.abc import Callable, Iterable, Mapping, Sequence
from datetime import UTC, datetime
from pathlib import Path

from collectors.base import MAX_SKIP_DETAILS, RunContext, ServiceCollector
from collectors.service_sheet import read_service_prices
from tracker.collect import RunSummary
from tracker.errors import one_line
from tracker.models import RunStatus
from tracker.redact import redact, secrets_of
from tracker.service_prices import ServicePrice
from tracker.settings import Settings
from tracker.store import DatabaseError, Engine, runs
from tracker.store.ingest import IngestStats
from tracker.store.series import record_service_run

__all__ = ["SERVICES_SCOPE", "import_service_sheet", "run_service_collector"]

log = logging.getLogger(__name__)

SERVICES_SCOPE = "services"
"""The run log's scope of a service price run, and the scheduler's job name for it."""


def _start(engine: Engine, provider: str, source: str, now: datetime | None) -> RunSummary:
    started = (now or datetime.now(UTC)).astimezone(UTC)
    summary = RunSummary(
        provider=provider,
        source=source,
        status=RunStatus.RUNNING,
        scope=SERVICES_SCOPE,
        started_at=started,
    )
    summary.run_id = runs.start_run(
        engine, provider=provider, source=source, scope=SERVICES_SCOPE, started=started
    )
    return summary


def run_service_collector(
    engine: Engine, collector: ServiceCollector, settings: Settings, *, now: datetime | None = None
) -> RunSummary:
    """One complete run of ``collector.collect_service_prices`` for its own source.

    Provider failures come back as a failed summary (one line, credentials redacted);
    raises :class:`DatabaseError` only when the run cannot even be recorded.
    """
    summary = _start(engine, collector.name, collector.name, now)
    ctx = RunContext(settings=settings, source=collector.name)

    def read() -> list[ServicePrice]:
        return list(_checked(collector.collect_service_prices(ctx)))

    return _record(
        engine,
        summary,
        read,
        skips=ctx.skips,
        details=ctx.details,
        partial=ctx.partial,
        complete=True,
        unchanged=lambda: ctx.unchanged,
        secrets=secrets_of(settings),
    )


def import_service_sheet(
    engine: Engine, path: Path, *, provider: str, source: str, complete: bool
) -> RunSummary:
    """Load ``path``'s service prices for ``source``; a bad row is skipped and counted,
    a file that cannot be read fails the run (raises DatabaseError only when the run
    cannot even be recorded)."""
    summary = _start(engine, provider, source, None)
    skips: Counter[str] = Counter()
    details: list[str] = []

    def skip(reason: str, detail: str = "") -> None:
        skips[reason] += 1
        if len(details) < MAX_SKIP_DETAILS:
            details.append(f"{reason}: {detail}" if detail else reason)

    def read() -> list[ServicePrice]:
        return list(read_service_prices(path, skip))

    return _record(
        engine, summary, read, skips=skips, details=details, partial={}, complete=complete
    )


def _record(
    engine: Engine,
    summary: RunSummary,
    read: Callable[[], list[ServicePrice]],
    *,
    skips: Counter[str],
    details: list[str],
    partial: Mapping[str, str],
    complete: bool,
    unchanged: Callable[[], bool] = lambda: False,
    secrets: Sequence[str] = (),
) -> RunSummary:
    """Read the prices, then store them with the run's success in one transaction; any
    failure is recorded as the run's one-line error instead. A read that found its source
    ``unchanged`` (a 304) ends no tier, however complete the run."""
    assert summary.run_id is not None
    try:
        prices = read()
        summary.finished_at = datetime.now(UTC)
        stats = record_service_run(
            engine,
            summary.run_id,
            prices,
            source=summary.source,
            finished=summary.finished_at,
            complete=complete and not unchanged(),
            skipped=sum(skips.values()),
            skip_reasons=_reasons(skips, partial),
            partial_regions=frozenset(partial),
        )
    except Exception as exc:
        summary.status = RunStatus.FAILED
        summary.database_failed = isinstance(exc, DatabaseError)
        summary.error = redact(one_line(exc), secrets)
        summary.finished_at = datetime.now(UTC)
        log.info("%s: service price run failed: %s", summary.source, summary.error)
        try:
            runs.record_failure(
                engine,
                summary.run_id,
                finished=summary.finished_at,
                error=summary.error,
                skipped=sum(skips.values()),
                skip_reasons=dict(skips),
            )
        except DatabaseError:
            summary.recorded = False
        return summary
    finally:
        summary.skip_reasons = _reasons(skips, partial)
        summary.skipped = sum(skips.values())
        summary.skip_details = list(details)
        summary.partial_regions = dict(partial)
    summary.status = RunStatus.SUCCEEDED
    summary.stats = IngestStats(
        offers_seen=stats.seen,
        new_series=stats.new_series,
        price_changes=stats.changed,
        unchanged=stats.unchanged,
        delisted=stats.ended,
    )
    log.info("%s: %d service prices read, %d changed", summary.source, stats.seen, stats.changed)
    return summary


def _reasons(skips: Counter[str], partial: Mapping[str, str]) -> dict[str, int]:
    reasons = dict(skips)
    if partial:
        reasons["partial_regions"] = len(partial)
    return reasons


def _checked(prices: Iterable[ServicePrice]) -> Iterable[ServicePrice]:
    for price in prices:
        if not isinstance(price, ServicePrice):
            raise TypeError(f"collector yielded {type(price).__name__}, expected ServicePrice")
        yield price
