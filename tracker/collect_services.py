"""A run that loads storage and transfer prices (a service price sheet).

Recorded in ``collection_runs`` like every run (scope ``services``), stored with its
success in one transaction, so a failed or interrupted import leaves nothing half
written and the run log says what happened.
"""

from __future__ import annotations

import logging
from collections import Counter
from datetime import UTC, datetime
from pathlib import Path

from collectors.base import MAX_SKIP_DETAILS
from collectors.service_sheet import read_service_prices
from tracker.collect import RunSummary
from tracker.errors import one_line
from tracker.models import RunStatus
from tracker.store import runs
from tracker.store.engine import Engine
from tracker.store.ingest import IngestStats
from tracker.store.service_prices import record_service_run

__all__ = ["SERVICES_SCOPE", "import_service_sheet"]

log = logging.getLogger(__name__)

SERVICES_SCOPE = "services"


def import_service_sheet(
    engine: Engine, path: Path, *, provider: str, source: str, complete: bool
) -> RunSummary:
    """Load ``path``'s service prices for ``source``; a bad row is skipped and counted,
    a file that cannot be read fails the run (raises DatabaseError only when the run
    cannot even be recorded)."""
    started = datetime.now(UTC)
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
    skips: Counter[str] = Counter()

    def skip(reason: str, detail: str = "") -> None:
        skips[reason] += 1
        if len(summary.skip_details) < MAX_SKIP_DETAILS:
            summary.skip_details.append(f"{reason}: {detail}" if detail else reason)

    try:
        prices = list(read_service_prices(path, skip))
        summary.finished_at = datetime.now(UTC)
        stats = record_service_run(
            engine,
            summary.run_id,
            prices,
            source=source,
            finished=summary.finished_at,
            complete=complete,
            skipped=sum(skips.values()),
            skip_reasons=dict(skips),
        )
    except Exception as exc:
        summary.status = RunStatus.FAILED
        summary.error = one_line(exc)
        summary.finished_at = datetime.now(UTC)
        runs.record_failure(
            engine,
            summary.run_id,
            finished=summary.finished_at,
            error=summary.error,
            skipped=sum(skips.values()),
            skip_reasons=dict(skips),
        )
        return summary
    finally:
        summary.skip_reasons = dict(skips)
        summary.skipped = sum(skips.values())
    summary.status = RunStatus.SUCCEEDED
    summary.stats = IngestStats(
        offers_seen=stats.seen,
        new_series=stats.new_series,
        price_changes=stats.changed,
        unchanged=stats.unchanged,
        delisted=stats.ended,
    )
    log.info("%s: %d service prices read, %d changed", source, stats.seen, stats.changed)
    return summary
