"""Collector health as the run log tells it: the ``runs`` listing and the Collectors
page's last run per provider (the live scheduler's report is the service's
:class:`~tracker.service.health.HealthState`; ``web`` rebuilds it from this log)."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from tracker.store import Engine, reads

__all__ = ["RUN_KEYS", "last_run_per_provider", "run_rows"]

RUN_KEYS = (
    "id",
    "provider",
    "source",
    "scope",
    "status",
    "started_at",
    "finished_at",
    "offers_seen",
    "new_series",
    "price_changes",
    "delisted",
    "skipped",
    "error",
)
"""A collection run's row (``runs --format json``)."""


def run_rows(
    engine: Engine,
    provider: str | None = None,
    limit: int = 20,
    *,
    source: str | None = None,
    statuses: Sequence[str] = (),
) -> list[dict[str, Any]]:
    """The collection-run log, newest first; only runs of ``statuses`` when given
    (raises DatabaseError)."""
    return [
        {key: getattr(r, key) for key in RUN_KEYS}
        for r in reads.recent_runs(engine, provider, limit, source=source, statuses=statuses)
    ]


def last_run_per_provider(engine: Engine, *, scan: int = 500) -> list[dict[str, Any]]:
    """Each provider's newest run among the latest ``scan``, by provider name, with why
    offers were skipped (``skip_reasons``)."""
    last: dict[str, dict[str, Any]] = {}
    for r in reads.recent_runs(engine, limit=scan):
        if r.provider not in last:
            last[r.provider] = {key: getattr(r, key) for key in (*RUN_KEYS, "skip_reasons")}
    return [last[p] for p in sorted(last)]
