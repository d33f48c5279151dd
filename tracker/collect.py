"""Collection runs: fetch → parse → store, one provider at a time, each isolated.

A run is recorded in ``collection_runs`` before it starts, streams its offers
into the store inside one transaction, and marks itself succeeded in that same
transaction; any failure rolls the whole snapshot back and records the error. So
a half-finished run never leaves half a snapshot, and the run log always says
what happened.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from datetime import UTC, datetime

from sqlalchemy import Engine, func, insert, select, update
from sqlalchemy.exc import DBAPIError, SQLAlchemyError

from collectors.base import ALL_PRICING, Collector, LastObserved, RunContext
from tracker.errors import one_line
from tracker.models import Offer, PricingModel, RunStatus
from tracker.settings import Settings
from tracker.store.engine import DatabaseError
from tracker.store.ingest import DelistScope, Ingest, IngestStats
from tracker.store.schema import CollectionRun, PricePoint, Series

__all__ = ["RunSummary", "run_collector", "scope_label"]

log = logging.getLogger(__name__)

OfferCallback = Callable[[int], None]


def utcnow() -> datetime:
    return datetime.now(UTC)


def scope_label(scope: frozenset[PricingModel]) -> str:
    if scope == ALL_PRICING:
        return "all"
    return ",".join(sorted(p.value for p in scope))


@dataclass
class RunSummary:
    provider: str
    status: RunStatus
    run_id: int | None = None
    scope: str = "all"
    stats: IngestStats = field(default_factory=IngestStats)
    """What the store did with the run's offers (zero unless it succeeded)."""
    skipped: int = 0
    skip_reasons: dict[str, int] = field(default_factory=dict)
    partial_regions: dict[str, str] = field(default_factory=dict)
    skip_details: list[str] = field(default_factory=list)
    """The first :data:`MAX_SKIP_DETAILS` skip messages, for the CLI to show."""
    error: str | None = None
    started_at: datetime | None = None
    finished_at: datetime | None = None

    @property
    def ok(self) -> bool:
        return self.status is not RunStatus.FAILED


def _last_observed_reader(engine: Engine, source: str) -> LastObserved:
    def last_observed(pricing: PricingModel, region: str) -> datetime | None:
        stmt = (
            select(func.max(PricePoint.last_seen))
            .join(Series, Series.id == PricePoint.series_id)
            .where(
                Series.source == source,
                Series.pricing == pricing.value,
                Series.region == region,
            )
        )
        with engine.connect() as conn:
            value = conn.execute(stmt).scalar()
        if isinstance(value, str):  # SQLite aggregate results bypass the column type
            value = datetime.fromisoformat(value)
        if isinstance(value, datetime) and value.tzinfo is None:
            value = value.replace(tzinfo=UTC)
        return value

    return last_observed


def _start_run(engine: Engine, provider: str, scope: str, started: datetime) -> int:
    try:
        with engine.begin() as conn:
            # A run left "running" by a process that died can never finish.
            conn.execute(
                update(CollectionRun)
                .where(
                    CollectionRun.provider == provider,
                    CollectionRun.scope == scope,
                    CollectionRun.status == RunStatus.RUNNING,
                )
                .values(status=RunStatus.ABANDONED, finished_at=started)
            )
            run_id = conn.execute(
                insert(CollectionRun)
                .values(
                    provider=provider, scope=scope, status=RunStatus.RUNNING, started_at=started
                )
                .returning(CollectionRun.id)
            ).scalar_one()
    except (DBAPIError, SQLAlchemyError) as exc:
        raise DatabaseError(f"cannot record a run for {provider}: {one_line(exc)}") from exc
    return int(run_id)


def run_collector(
    engine: Engine,
    collector: Collector,
    settings: Settings,
    *,
    pricing_scope: frozenset[PricingModel] = ALL_PRICING,
    now: datetime | None = None,
    delist: bool = True,
    on_offer: OfferCallback | None = None,
) -> RunSummary:
    """One run of one collector; provider failures come back as a failed summary.

    Raises :class:`DatabaseError` only if the run cannot even be recorded.
    ``delist=False`` makes the run additive (an ad-hoc import), otherwise every
    listed series of this collector in scope that was not seen is delisted.
    """
    name = collector.name
    started = (now or utcnow()).astimezone(UTC)
    scope = scope_label(pricing_scope)
    summary = RunSummary(provider=name, status=RunStatus.RUNNING, scope=scope, started_at=started)
    summary.run_id = _start_run(engine, name, scope, started)
    ctx = RunContext(
        settings=settings,
        pricing_scope=pricing_scope,
        source=name,
        last_observed_reader=_last_observed_reader(engine, name),
    )
    out_of_scope = 0
    try:
        with engine.begin() as conn:
            ingest = Ingest(conn, source=name, run_time=started)
            for offer in _checked(collector.collect(ctx)):
                if offer.pricing not in pricing_scope:
                    out_of_scope += 1
                    continue
                ingest.add(offer)
                if on_offer is not None:
                    on_offer(ingest.count)
            delist_scope = (
                DelistScope(name, pricing_scope, frozenset(ctx.partial)) if delist else None
            )
            stats = ingest.finish(delist_scope)
            finished = utcnow()
            summary.status = RunStatus.SUCCEEDED
            summary.stats = stats
            summary.skip_reasons = _reasons(ctx, out_of_scope, stats.refused_delist)
            summary.skipped = ctx.skipped
            summary.partial_regions = dict(ctx.partial)
            summary.skip_details = list(ctx.details)
            summary.finished_at = finished
            conn.execute(
                update(CollectionRun)
                .where(CollectionRun.id == summary.run_id)
                .values(
                    status=RunStatus.SUCCEEDED,
                    finished_at=finished,
                    **stats.run_counts(),
                    skipped=summary.skipped,
                    skip_reasons=summary.skip_reasons or None,
                )
            )
    except Exception as exc:
        summary.status = RunStatus.FAILED
        summary.error = one_line(exc)
        summary.skip_reasons = dict(ctx.skips)
        summary.skipped = ctx.skipped
        summary.skip_details = list(ctx.details)
        summary.finished_at = utcnow()
        summary.stats = IngestStats()
        log.error("%s: run failed: %s", name, summary.error, exc_info=_unexpected(exc))
        _record_failure(engine, summary)
        return summary
    log.info(
        "%s: run succeeded: %d offers, %d new series, %d price changes, %d delisted, %d skipped",
        name,
        summary.stats.offers_seen,
        summary.stats.new_series,
        summary.stats.price_changes,
        summary.stats.delisted,
        summary.skipped,
    )
    return summary


def _reasons(ctx: RunContext, out_of_scope: int, refused_delist: int) -> dict[str, int]:
    """Skip counts by reason, plus what the run deliberately did not do."""
    reasons = dict(ctx.skips)
    if refused_delist:
        reasons["not_delisted_empty_run"] = refused_delist
    if ctx.partial:
        reasons["partial_regions"] = len(ctx.partial)
    if out_of_scope:
        reasons["out_of_scope"] = out_of_scope
    return reasons


def _unexpected(exc: BaseException) -> bool:
    """Tracebacks only for bugs, not for the provider or database failing."""
    from collectors.base import CollectorError
    from collectors.http import HttpError

    return not isinstance(exc, CollectorError | HttpError | DBAPIError | DatabaseError)


def _record_failure(engine: Engine, summary: RunSummary) -> None:
    try:
        with engine.begin() as conn:
            conn.execute(
                update(CollectionRun)
                .where(CollectionRun.id == summary.run_id)
                .values(
                    status=RunStatus.FAILED,
                    finished_at=summary.finished_at,
                    skipped=summary.skipped,
                    skip_reasons=summary.skip_reasons or None,
                    error=(summary.error or "")[:2000],
                )
            )
    except (DBAPIError, SQLAlchemyError) as exc:
        # The next run of this provider marks the row abandoned.
        log.error("%s: could not record the failure: %s", summary.provider, one_line(exc))


def _checked(offers: Iterable[Offer]) -> Iterable[Offer]:
    for offer in offers:
        if not isinstance(offer, Offer):
            raise TypeError(f"collector yielded {type(offer).__name__}, expected Offer")
        yield offer
