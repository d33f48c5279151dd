"""Run bookkeeping: the ``collection_runs`` log and the one transaction a run writes in.

A run is logged ``running`` before it fetches anything, so a crash still leaves a
trace; its offers, its delisting and its ``succeeded`` row commit together in
:func:`run_transaction`, so a failed run leaves no partial snapshot. The runner
(``tracker.collect``) writes its runs only through here; what the service asks
the run log is in :mod:`tracker.store.job_runs`.
"""

from __future__ import annotations

import gc
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from datetime import datetime

from sqlalchemy import Connection, Engine, func, insert, select, update

from tracker.models import Offer, PricingModel, RunStatus
from tracker.store import rollup
from tracker.store.errors import database_errors
from tracker.store.ingest import DelistScope, Ingest, IngestStats
from tracker.store.job_runs import mark_succeeded
from tracker.store.last_seen import effective_last_seen, join_confirmations
from tracker.store.schema import CollectionRun, PricePoint, Series

__all__ = [
    "RunWriter",
    "last_observed",
    "record_failure",
    "run_transaction",
    "start_run",
]

MAX_ERROR_CHARS = 2000
ORPHAN_ERROR = "abandoned: the process running it stopped without recording how it ended"
"""The error of a run found ``running`` that nobody runs any more (a crash, a kill)."""


def start_run(engine: Engine, *, provider: str, source: str, scope: str, started: datetime) -> int:
    """Log a ``running`` row and return its id.

    A row of the same source and scope still ``running`` belongs to a process that
    died mid-run (two runs of one job never overlap: the job lock sees to that), so it
    is marked ``abandoned`` now instead of staying ``running`` forever.
    """
    with database_errors(f"cannot record a run for {source}"), engine.begin() as conn:
        # When it ended is unknown (finished_at stays empty); when it was found is not.
        conn.execute(
            update(CollectionRun)
            .where(
                CollectionRun.source == source,
                CollectionRun.scope == scope,
                CollectionRun.status == RunStatus.RUNNING,
            )
            .values(
                status=RunStatus.ABANDONED,
                error=f"{ORPHAN_ERROR} (found when the next run started at {started.isoformat()})",
            )
        )
        run_id = conn.execute(
            insert(CollectionRun)
            .values(
                provider=provider,
                source=source,
                scope=scope,
                status=RunStatus.RUNNING,
                started_at=started,
            )
            .returning(CollectionRun.id)
        ).scalar_one()
    return int(run_id)


class RunWriter:
    """One run's offers on their way into the store, inside the run's transaction."""

    def __init__(self, conn: Connection, run_id: int, *, source: str, run_time: datetime) -> None:
        self._conn = conn
        self._source, self._run_time = source, run_time
        self._since_point = rollup.last_point_id(conn)
        """The newest interval before the run: the run's own are above it."""
        self._ingest = Ingest(conn, source=source, run_time=run_time, run_id=run_id)
        self.run_id = run_id
        # Bound once: the runner calls it for every offer of the run.
        self.add: Callable[[Offer], None] = self._ingest.add

    @property
    def count(self) -> int:
        """Offers added so far."""
        return self._ingest.count

    def finish(self, delist: DelistScope | None) -> IngestStats:
        """Apply the offers (and delist what ``delist`` covers and was not seen), then
        bring the cheapest-price rollup up to date in the same transaction."""
        stats = self._ingest.finish(delist)
        rollup.maintain_run(
            self._conn,
            since_id=self._since_point,
            source=self._source,
            delisted_at=self._run_time if stats.delisted else None,
        )
        return stats

    def abandon(self) -> None:
        """The run is failing: leave the connection ready for its rollback."""
        self._ingest.abandon()

    def succeeded(
        self,
        stats: IngestStats,
        *,
        finished: datetime,
        skipped: int,
        skip_reasons: dict[str, int],
    ) -> None:
        """Mark the run succeeded; commits with the offers when the transaction ends."""
        mark_succeeded(
            self._conn,
            self.run_id,
            finished=finished,
            counts=stats.run_counts(),
            skipped=skipped,
            skip_reasons=skip_reasons,
        )


@contextmanager
def run_transaction(
    engine: Engine, run_id: int, *, source: str, run_time: datetime
) -> Iterator[RunWriter]:
    """The run's one transaction: commits if the block completes, else rolls back.

    A database failure inside (including the commit) comes out as ``DatabaseError``;
    anything else, such as the collector's own failure, passes through unchanged.
    """
    with _frozen_heap(), database_errors(f"run {run_id} of {source}"), engine.begin() as conn:
        writer = RunWriter(conn, run_id, source=source, run_time=run_time)
        try:
            yield writer
        except BaseException:
            writer.abandon()  # before the rollback: nothing left in flight
            raise


@contextmanager
def _frozen_heap() -> Iterator[None]:
    """Keep the objects that exist before a run out of the garbage collector's way while
    it runs. A run allocates a few objects per offer, enough for a full collection or
    two, and each full collection walks every object of the process (88,000 once the write
    path is imported, 140,000 in bench/ingest.py's process: 70-80 ms per walk). Frozen (``gc.freeze``), they are skipped;
    unfrozen afterwards, they are collected as before, so nothing is kept alive. Runs
    overlapping in the service's threads only share the benefit. Measured again (issue 30)
    with the collector's own callbacks: a 200,000-offer re-collection in a 550,000-object
    process spent 190 ms per run collecting frozen, 572 ms not; at 20,000 offers, the same."""
    gc.freeze()
    try:
        yield
    finally:
        gc.unfreeze()


def record_failure(
    engine: Engine,
    run_id: int,
    *,
    finished: datetime,
    error: str,
    skipped: int,
    skip_reasons: dict[str, int],
) -> None:
    """Mark the run failed with its (one-line) error; raises ``DatabaseError`` if even
    that cannot be written (the next run of the source then marks it abandoned)."""
    with database_errors(f"cannot record the failure of run {run_id}"), engine.begin() as conn:
        conn.execute(
            update(CollectionRun)
            .where(CollectionRun.id == run_id)
            .values(
                status=RunStatus.FAILED,
                finished_at=finished,
                skipped=skipped,
                skip_reasons=skip_reasons or None,
                error=error[:MAX_ERROR_CHARS],
            )
        )


def last_observed(
    engine: Engine, source: str, pricing: PricingModel, region: str
) -> datetime | None:
    """The latest stored observation of ``source``'s offers of ``pricing`` in ``region``
    (where an incremental fetch resumes), or None if none is stored."""
    stmt = join_confirmations(
        select(func.max(effective_last_seen()))  # typed: comes back as an aware UTC time
        .select_from(PricePoint)
        .join(Series, Series.id == PricePoint.series_id)
    )
    stmt = stmt.where(
        Series.source == source,
        Series.pricing == pricing.value,
        Series.region == region,
    )
    with database_errors(f"cannot read what {source} last observed"), engine.connect() as conn:
        value: datetime | None = conn.execute(stmt).scalar()
    return value
