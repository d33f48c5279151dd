"""The run log's own rows: a run logged ``running`` before it fetches anything (so a
crash still leaves a trace), its failure, and where an incremental fetch resumes.

The one transaction a run writes its offers in is :func:`tracker.store.ingest.run_transaction`;
what the service asks the run log is in this package's ``_jobs``.
"""

from __future__ import annotations

from datetime import datetime

from sqlalchemy import Engine, func, insert, select, update

from tracker.models import PricingModel, RunStatus
from tracker.store.errors import database_errors
from tracker.store.last_seen import effective_last_seen, join_confirmations
from tracker.store.schema import CollectionRun, PricePoint, Series

__all__ = ["MAX_ERROR_CHARS", "ORPHAN_ERROR", "last_observed", "record_failure", "start_run"]

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
