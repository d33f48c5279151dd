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
from functools import partial

from collectors.base import ALL_PRICING, Collector, RateCollector, RunContext
from tracker.errors import drop_frames, one_line
from tracker.models import Offer, PricingModel, RunStatus
from tracker.redact import redact, secrets_of
from tracker.settings import Settings
from tracker.storable import time_problem
from tracker.store import MAX_SOURCE_CHARS, DatabaseError, Engine, runs, series
from tracker.store.ingest import DelistScope, IngestStats, run_transaction

__all__ = [
    "IMPORT_PREFIX",
    "RUN_FAILED",
    "RunSummary",
    "import_source",
    "run_collector",
    "scope_label",
]

log = logging.getLogger(__name__)
RUN_FAILED = "%s: run failed: %s"
"""The log message of a failed run (the CLI, which reports the failure itself, knows it)."""

OfferCallback = Callable[[int], None]


def utcnow() -> datetime:
    return datetime.now(UTC)


IMPORT_PREFIX = "import:"


def import_source(name: str) -> str:
    """The source an ad-hoc import writes for: ``import:<name>``.

    The name (a file's name, or one the user gives) is the import's identity: importing
    under the same name again updates, and with ``--full`` delists, that import's offers
    and nothing else. The prefix keeps every import apart from every collector, so no
    import can delist a provider's or the configured sheet's offers. Raises ValueError.
    """
    cleaned = name.strip()
    if not cleaned or not cleaned.isprintable():
        raise ValueError(f"source name {name!r}: give printable text")
    limit = MAX_SOURCE_CHARS - len(IMPORT_PREFIX)
    if len(cleaned) > limit:
        raise ValueError(
            f"source name {cleaned!r} is {len(cleaned)} characters, at most {limit} fit"
            " (name the import with --source)"
        )
    return IMPORT_PREFIX + cleaned


def scope_label(scope: frozenset[PricingModel]) -> str:
    if scope == ALL_PRICING:
        return "all"
    return ",".join(sorted(p.value for p in scope))


@dataclass
class RunSummary:
    provider: str
    """The collector that ran."""
    status: RunStatus
    run_id: int | None = None
    scope: str = "all"
    stats: IngestStats = field(default_factory=IngestStats)
    """What the store did with the run's offers (zero unless it succeeded)."""
    skipped: int = 0
    skip_reasons: dict[str, int] = field(default_factory=dict)
    partial_regions: dict[str, str] = field(default_factory=dict)
    skip_details: list[str] = field(default_factory=list)
    """The first :data:`collectors.base.MAX_SKIP_DETAILS` skip messages, for the CLI to show."""
    error: str | None = None
    started_at: datetime | None = None
    finished_at: datetime | None = None
    source: str = ""
    """The source the run wrote for; a collector writes under its own name (the
    default), an ad-hoc import under ``import:<name>``."""
    database_failed: bool = False
    """The run failed on the store (a lost connection, a statement refused), not on the
    provider or the collector."""
    recorded: bool = True
    """False when the run's failure could not be written to the run log (the database
    went away mid-run): the row still says ``running`` until someone records it."""

    def __post_init__(self) -> None:
        if not self.source:
            self.source = self.provider

    @property
    def ok(self) -> bool:
        return self.status is not RunStatus.FAILED


def run_collector(
    engine: Engine,
    collector: Collector | RateCollector,
    settings: Settings,
    *,
    pricing_scope: frozenset[PricingModel] = ALL_PRICING,
    now: datetime | None = None,
    delist: bool = True,
    source: str | None = None,
    on_offer: OfferCallback | None = None,
    label: str | None = None,
) -> RunSummary:
    """One run of one collector; provider failures come back as a failed summary.

    Raises :class:`DatabaseError` only if the run cannot even be recorded. The run
    writes for ``source`` (default: the collector's name): its series carry it, and
    ``delist`` (a complete run) delists only that source's listed series in scope
    that were not seen. ``delist=False`` makes the run additive. ``label`` is the
    scope the run log records (the service's job scope, ``standard`` or ``spot``);
    by default the pricing models' (:func:`scope_label`).
    """
    name = collector.name
    source = source or name
    started = (now or utcnow()).astimezone(UTC)
    scope = label or scope_label(pricing_scope)
    summary = RunSummary(
        provider=name, source=source, status=RunStatus.RUNNING, scope=scope, started_at=started
    )
    summary.run_id = runs.start_run(
        engine, provider=name, source=source, scope=scope, started=started
    )
    ctx = RunContext(
        settings=settings,
        pricing_scope=pricing_scope,
        source=source,
        last_observed_reader=partial(runs.last_observed, engine, source),
        listed_reader=partial(series.listed_keys, engine, source),
    )
    if isinstance(collector, RateCollector):
        return _run_rates(engine, collector, settings, summary, ctx)
    out_of_scope = 0
    try:
        with run_transaction(engine, summary.run_id, source=source, run_time=started) as writer:
            add = writer.add
            for offer in _checked(collector.collect(ctx), ctx):
                if offer.pricing not in pricing_scope:
                    out_of_scope += 1
                    continue
                add(offer)
                if on_offer is not None:
                    on_offer(writer.count)
            delist_scope = (
                DelistScope(source, pricing_scope, frozenset(ctx.partial))
                if delist and not ctx.unchanged
                else None
            )
            stats = writer.finish(delist_scope)
            finished = _succeeded(summary, ctx, stats, out_of_scope)
            writer.succeeded(
                stats,
                finished=finished,
                skipped=summary.skipped,
                skip_reasons=summary.skip_reasons,
            )
    except Exception as exc:
        _failed(summary, ctx, exc, settings)
        _log_failure(summary, exc)
        _record_failure(engine, summary)
        return summary
    log.info(
        "%s: run succeeded: %d offers, %d new series, %d price changes, %d delisted, %d skipped",
        source,
        summary.stats.offers_seen,
        summary.stats.new_series,
        summary.stats.price_changes,
        summary.stats.delisted,
        summary.skipped,
    )
    return summary


def _succeeded(
    summary: RunSummary, ctx: RunContext, stats: IngestStats, out_of_scope: int
) -> datetime:
    """The summary of a run whose offers are stored (committed with its run row); returns
    when it finished."""
    summary.status = RunStatus.SUCCEEDED
    summary.stats = stats
    summary.skip_reasons = _reasons(ctx, out_of_scope, stats.refused_delist)
    summary.skipped = ctx.skipped
    summary.partial_regions = dict(ctx.partial)
    summary.skip_details = list(ctx.details)
    summary.finished_at = finished = utcnow()
    return finished


def _failed(summary: RunSummary, ctx: RunContext, exc: Exception, settings: Settings) -> None:
    """The summary of a failed run, its error one line with no credential in it."""
    summary.status = RunStatus.FAILED
    summary.database_failed = isinstance(exc, DatabaseError)
    # A provider may quote a credential back in its error (GCP echoes the API
    # key): the summary is printed and stored, so it never holds one.
    summary.error = redact(one_line(exc), secrets_of(settings))
    summary.skip_reasons = dict(ctx.skips)
    summary.skipped = ctx.skipped
    summary.skip_details = list(ctx.details)
    summary.finished_at = utcnow()
    summary.stats = IngestStats()


def _run_rates(
    engine: Engine,
    collector: RateCollector,
    settings: Settings,
    summary: RunSummary,
    ctx: RunContext,
) -> RunSummary:
    """A run of an exchange-rate source: fetch, then store the rates and the run's
    success in one transaction (tracker.store.series); failures are recorded like any run."""
    assert summary.run_id is not None
    try:
        rates = collector.collect_rates(ctx, series.latest_day(engine))
        summary.finished_at = utcnow()
        summary.skip_reasons = dict(ctx.skips)
        summary.skipped = ctx.skipped
        summary.skip_details = list(ctx.details)
        stats = series.record_run(
            engine,
            summary.run_id,
            rates,
            source=summary.source,
            finished=summary.finished_at,
            skipped=summary.skipped,
            skip_reasons=summary.skip_reasons,
        )
    except Exception as exc:
        summary.status = RunStatus.FAILED
        summary.error = redact(one_line(exc), secrets_of(settings))
        summary.skip_reasons = dict(ctx.skips)
        summary.skipped = ctx.skipped
        summary.skip_details = list(ctx.details)
        summary.finished_at = utcnow()
        _log_failure(summary, exc)
        _record_failure(engine, summary)
        return summary
    summary.status = RunStatus.SUCCEEDED
    summary.stats = IngestStats(
        offers_seen=stats.seen,
        new_series=stats.new_currencies,
        price_changes=stats.added,
        unchanged=stats.unchanged,
    )
    log.info(
        "%s: run succeeded: %d rates read, %d rate changes stored, %d unchanged",
        summary.source,
        stats.seen,
        stats.added,
        stats.unchanged,
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
    if ctx.unchanged:
        reasons["unchanged_at_source"] = 1
    return reasons


def _unexpected(exc: BaseException) -> bool:
    """Tracebacks only for bugs, not for the provider, the network or the database
    failing (a host that does not resolve, a refused or reset connection, a timeout:
    ``OSError``; an SDK's own HTTP error wrapped in httpx's)."""
    import httpx  # here: importing httpx loads its CLI's libraries, which reads never need

    from collectors.base import CollectorError
    from collectors.http import HttpError

    expected = CollectorError | HttpError | DatabaseError | OSError | httpx.HTTPError
    return not isinstance(exc, expected)


def _log_failure(summary: RunSummary, exc: BaseException) -> None:
    """A provider or database failure is the caller's to report (the CLI's table, the
    service's one ERROR ``run`` line), so it is INFO here; a bug gets its traceback, at
    WARNING so that the run's own line stays the one ERROR. Told (and its one line in the
    summary), the failure lets go of its frames: nothing of the run outlives it."""
    if _unexpected(exc):
        log.warning(RUN_FAILED, summary.source, summary.error, exc_info=True)
    else:
        log.info(RUN_FAILED, summary.source, summary.error)
    drop_frames(exc)


def _record_failure(engine: Engine, summary: RunSummary) -> None:
    assert summary.run_id is not None and summary.finished_at is not None
    try:
        runs.record_failure(
            engine,
            summary.run_id,
            finished=summary.finished_at,
            error=summary.error or "",
            skipped=summary.skipped,
            skip_reasons=summary.skip_reasons,
        )
    except DatabaseError as exc:
        # The service records it when the database is back; otherwise the next run of
        # this source (or the next start of `serve`) marks the row abandoned.
        summary.recorded = False
        log.warning(
            "%s: could not record the failure of run %s now: %s",
            summary.source,
            summary.run_id,
            exc,
        )


def _checked(offers: Iterable[Offer], ctx: RunContext) -> Iterable[Offer]:
    """The collector's offers; one dated in the future (or before any cloud) by its
    source is a counted skip (:func:`tracker.storable.time_problem`), whatever the
    collector, since it would hold the offer's price open until that date."""
    now = utcnow()
    for offer in offers:
        if not isinstance(offer, Offer):
            raise TypeError(f"collector yielded {type(offer).__name__}, expected Offer")
        if offer.observed_at is not None:
            problem = time_problem(offer.observed_at, now)
            if problem is not None:
                where = f"{offer.provider} {offer.instance_type} {offer.region}"
                ctx.skip("bad_observed_at", f"{where}: observed_at: {problem}")
                continue
        yield offer
