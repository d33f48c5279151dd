"""Prometheus metrics of one service instance.

Each instance owns its ``CollectorRegistry`` (not the process-global default) so
several services can live in one test process without "duplicated timeseries".
Label values are collector name and job scope only: bounded cardinality.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping

from prometheus_client import CollectorRegistry, Counter, Gauge, Histogram, generate_latest
from prometheus_client.core import CounterMetricFamily, GaugeMetricFamily, Metric
from prometheus_client.registry import Collector

from tracker.alerts.stats import DeliveryStats
from tracker.service.outcome import FailureReason, JobStatus
from tracker.store import DatabaseError

__all__ = ["CONTENT_TYPE", "AlertMetrics", "Metrics"]

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
        self.configured = Gauge(
            "gpu_tracker_collector_configured",
            "1 when the collector can run (0: its credentials are missing; not a fault).",
            ["collector"],
            registry=r,
        )
        self.consecutive_failures = Gauge(
            "gpu_tracker_consecutive_failures",
            "Failed runs in a row of the job (0 after a success): the source is failing.",
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
        self.consecutive_failures.labels(collector, scope).set(0)
        self.configured.labels(collector).set(1)

    def watch_alerts(self, stats: DeliveryStats, backlog: Callable[[], Mapping[str, int]]) -> None:
        """Expose the alert sender's counters and the outbox backlog."""
        self.registry.register(AlertMetrics(stats, backlog))

    def render(self) -> bytes:
        return generate_latest(self.registry)


class AlertMetrics(Collector):
    """``gpu_tracker_alerts_sent_total{channel}``, ``..._failed_total{channel,reason}``
    (this process's sender) and ``gpu_tracker_alerts_backlog{channel}`` (the outbox's
    pending deliveries, read at scrape time; left out while the database is down)."""

    def __init__(self, stats: DeliveryStats, backlog: Callable[[], Mapping[str, int]]) -> None:
        self.stats = stats
        self.backlog = backlog

    def describe(self) -> Iterable[Metric]:
        return []  # no database query when registered

    def collect(self) -> Iterable[Metric]:
        sent = CounterMetricFamily(
            "gpu_tracker_alerts_sent", "Alerts a channel accepted.", labels=["channel"]
        )
        failed = CounterMetricFamily(
            "gpu_tracker_alerts_failed",
            "Alerts in failed delivery attempts, by channel and reason (http_404, timeout, auth…).",
            labels=["channel", "reason"],
        )
        snapshot = self.stats.snapshot()
        for name, s in sorted(snapshot.items()):
            sent.add_metric([name], s.sent)
            for reason, n in sorted(s.failed.items()):
                failed.add_metric([name, reason], n)
        yield sent
        yield failed
        try:
            pending = dict(self.backlog())
        except DatabaseError:
            return
        backlog = GaugeMetricFamily(
            "gpu_tracker_alerts_backlog",
            "Alert deliveries pending in the outbox, by channel.",
            labels=["channel"],
        )
        for name in sorted(set(snapshot) | set(pending)):
            backlog.add_metric([name], pending.get(name, 0))
        yield backlog
