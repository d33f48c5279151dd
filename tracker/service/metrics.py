"""Prometheus metrics of one service instance.

Each instance owns its ``CollectorRegistry`` (not the process-global default) so
several services can live in one test process without "duplicated timeseries".
Label values are collector name and job scope only: bounded cardinality.
"""

from __future__ import annotations

from prometheus_client import CollectorRegistry, Counter, Gauge, Histogram, generate_latest

from tracker.service.outcome import FailureReason, JobStatus

__all__ = ["CONTENT_TYPE", "Metrics"]

CONTENT_TYPE = "text/plain; version=0.0.4; charset=utf-8"
_JOB = ("collector", "scope")


class Metrics:
    def __init__(self) -> None:
        self.registry = CollectorRegistry(auto_describe=True)
        r = self.registry
        self.runs = Counter(
            "gpu_tracker_runs",
            "Collection runs by outcome (succeeded, failed, skipped).",
            [*_JOB, "status"],
            registry=r,
        )
        self.failures = Counter(
            "gpu_tracker_run_failures",
            "Failed runs by cause: collector (the provider or the collector), database.",
            [*_JOB, "reason"],
            registry=r,
        )
        self.skips = Counter(
            "gpu_tracker_runs_skipped",
            "Cadences not collected: locked (another runner holds the job), not_due (another "
            "runner already ran it), not_configured (credentials missing: a skipped run).",
            [*_JOB, "reason"],
            registry=r,
        )
        self.offers_seen = Counter(
            "gpu_tracker_offers_seen", "Offers returned by successful runs.", _JOB, registry=r
        )
        self.price_changes = Counter(
            "gpu_tracker_price_changes",
            "Price changes stored by successful runs.",
            _JOB,
            registry=r,
        )
        self.duration = Histogram(
            "gpu_tracker_run_duration_seconds",
            "Wall time of a collection run, including storage.",
            _JOB,
            buckets=(0.5, 1, 2.5, 5, 10, 30, 60, 120, 300, 600, 1200, 3600),
            registry=r,
        )
        self.last_success = Gauge(
            "gpu_tracker_last_success_timestamp_seconds",
            "Unix time the job last finished a successful run (0: never).",
            _JOB,
            registry=r,
        )
        self.stale = Gauge(
            "gpu_tracker_collector_stale",
            "1 when the job has had no successful run for stale_after_cadences cadences.",
            _JOB,
            registry=r,
        )
        self.database_up = Gauge(
            "gpu_tracker_database_up", "1 when the last database contact succeeded.", registry=r
        )

    def declare(self, collector: str, scope: str) -> None:
        """Create a job's series at 0 so dashboards see it before its first run."""
        for status in (JobStatus.SUCCEEDED, JobStatus.FAILED, JobStatus.SKIPPED):
            self.runs.labels(collector, scope, status)
        for reason in FailureReason:  # exactly what the runner can report
            self.failures.labels(collector, scope, reason)
        self.offers_seen.labels(collector, scope)
        self.price_changes.labels(collector, scope)
        self.last_success.labels(collector, scope)
        self.stale.labels(collector, scope).set(0)

    def render(self) -> bytes:
        return generate_latest(self.registry)
