"""The one transaction a collection run writes in.

Its offers, its delisting and its ``succeeded`` row commit together in
:func:`run_transaction`, so a failed run leaves no partial snapshot. The runner
(``tracker.collect``) writes its runs only through here and the run log
(:mod:`tracker.store.runs`).
"""

from __future__ import annotations

import gc
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from datetime import datetime

from sqlalchemy import Connection, Engine

from tracker.models import Offer
from tracker.store import rollup
from tracker.store.errors import database_errors
from tracker.store.ingest._ingest import DelistScope, Ingest, IngestStats
from tracker.store.runs import mark_succeeded

__all__ = ["RunWriter", "run_transaction"]


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
