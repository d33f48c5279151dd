"""``gpu-tracker serve``: every collector on its cadence, surviving what months bring.

Fault model, and where each fault is handled:

* provider errors (5xx, 429, timeouts) are retried by ``collectors.http``; a run
  that still fails is recorded failed by the runner and the next cadence tries
  again;
* the database going away (at start or mid-run) never leaves a partial run (the
  runner's single transaction) and never stops the service: the job is recorded
  failed in memory, /healthz turns 503, and the job is retried after
  ``db_retry_seconds`` instead of a whole cadence later; ``pool_pre_ping``
  replaces dead connections;
* a collector raising anything is one failed run; jobs are isolated;
* several replicas on one Postgres: an advisory lock per job (``locks``), the
  loser skips with a log line and writes no run row (a skip is not a collection);
* SIGTERM/SIGINT: no new runs start; a running one gets ``shutdown_timeout_seconds``
  to commit or roll back; exit status 0.
"""

from __future__ import annotations

import logging
import signal
import threading
import time
from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from types import FrameType
from typing import Any

from apscheduler.executors.pool import ThreadPoolExecutor
from apscheduler.schedulers.background import BackgroundScheduler
from apscheduler.triggers.date import DateTrigger
from apscheduler.triggers.interval import IntervalTrigger
from sqlalchemy import Engine, func, select, text
from sqlalchemy.exc import SQLAlchemyError
from sqlalchemy.pool import NullPool

from collectors.base import Collector, NotConfigured
from tracker import registry
from tracker.collect import RunSummary, run_collector, scope_label
from tracker.errors import one_line
from tracker.models import RunStatus
from tracker.service.health import HealthState
from tracker.service.hooks import PostRunHook, StaleHook, rankings_hook
from tracker.service.jobs import JobSpec, plan_jobs
from tracker.service.locks import JobLocks, locks_for
from tracker.service.metrics import CONTENT_TYPE, Metrics
from tracker.service.web import HealthServer, parse_address
from tracker.settings import Settings
from tracker.store.engine import DatabaseError, make_engine
from tracker.store.schema import CollectionRun

__all__ = ["JobOutcome", "Service"]

log = logging.getLogger(__name__)

STALENESS_CHECK_MAX_SECONDS = 60.0


def utcnow() -> datetime:
    return datetime.now(UTC)


def _as_utc(value: Any) -> datetime | None:
    if value is None:
        return None
    if isinstance(value, str):  # SQLite aggregates bypass the column type
        value = datetime.fromisoformat(value)
    if not isinstance(value, datetime):
        return None
    return value.replace(tzinfo=UTC) if value.tzinfo is None else value.astimezone(UTC)


@dataclass(frozen=True)
class JobOutcome:
    """What one attempt of a job came to.

    ``status`` is ``succeeded``/``failed``/``skipped`` (a run) or ``locked`` (another
    runner had the job; nothing was attempted). ``reason`` says why a run failed:
    ``collector`` (provider or collector error, recorded by the runner) or
    ``database`` (the store was unreachable; retried soon).
    """

    spec: JobSpec
    status: str
    summary: RunSummary | None = None
    reason: str | None = None
    error: str | None = None


class Service:
    """The scheduler, its health state and metrics; one instance per process."""

    def __init__(
        self,
        settings: Settings,
        *,
        engine: Engine | None = None,
        collectors: Mapping[str, type[Collector]] | None = None,
        http: str | None = None,
    ) -> None:
        self.settings = settings
        self.config = settings.scheduler
        self.engine = engine if engine is not None else make_engine(settings.database_url)
        self._ping_engine = self._make_ping_engine()
        self.locks: JobLocks = locks_for(self.engine)
        self.collectors = dict(
            collectors if collectors is not None else registry.available(settings)
        )
        self.http_address = self.config.http if http is None else http
        if self.http_address:
            parse_address(self.http_address)  # a typo fails now, not after the first run
        self.metrics = Metrics()
        self.health = HealthState(
            started_at=utcnow(), stale_after_cadences=self.config.stale_after_cadences
        )
        self.jobs = self._plan()
        self.post_run_hooks: list[PostRunHook] = []
        """Called in order after every successful run (rankings, then alerts)."""
        self.stale_hooks: list[StaleHook] = []
        """Called when a job turns stale (the alerts subsystem's entry point)."""
        hook = rankings_hook()
        if hook is not None:
            self.post_run_hooks.append(hook)
        self._hooks_lock = threading.Lock()
        self._seeded = False
        self._stopping = threading.Event()
        self._stop_requested = threading.Event()
        self._running: dict[str, datetime] = {}
        self._running_cond = threading.Condition()
        self._scheduler: BackgroundScheduler | None = None
        self._server: HealthServer | None = None
        self.abandoned: list[str] = []
        """Jobs still running when shutdown timed out (their transactions roll back)."""

    # -- setup -------------------------------------------------------------------

    def _make_ping_engine(self) -> Engine:
        """A pool-less engine with a short connect timeout, so /healthz answers fast."""
        if self.engine.dialect.name != "postgresql":
            return self.engine
        timeout = max(1, round(self.config.health_db_timeout_seconds))
        return make_engine(
            self.settings.database_url,
            poolclass=NullPool,
            connect_args={"connect_timeout": timeout, "application_name": "gpu-tracker-health"},
        )

    def _plan(self) -> list[JobSpec]:
        specs = plan_jobs(self.collectors, self.config, self.config.collectors)
        usable = []
        for spec in specs:
            reason = self._unusable(spec.collector)
            if reason is not None:
                if spec.collector not in self.health.disabled:
                    log.warning(
                        "%s: not scheduled: %s",
                        spec.collector,
                        reason,
                        extra={"event": "collector_disabled", "collector": spec.collector},
                    )
                self.health.disabled[spec.collector] = reason
                continue
            usable.append(spec)
            self.health.add(spec)
            self.metrics.declare(spec.collector, spec.scope)
        return usable

    def _unusable(self, name: str) -> str | None:
        if not registry.enabled(self.settings, name):
            return f"disabled ({name}.enabled = false)"
        try:
            self.collectors[name].from_settings(self.settings)
        except NotConfigured as exc:  # MissingCredentials too
            return str(exc)
        except Exception:  # reported by every run instead: it may be transient
            return None
        return None

    # -- database contact ----------------------------------------------------------

    def ping_database(self) -> bool:
        try:
            with self._ping_engine.connect() as conn:
                conn.execute(text("SELECT 1"))
        except (SQLAlchemyError, DatabaseError, OSError) as exc:
            self._database_state(False, one_line(exc))
            return False
        self._database_state(True)
        return True

    def _database_state(self, ok: bool, error: str | None = None) -> None:
        if self.health.set_database(ok, error):
            if ok:
                log.info("database reachable", extra={"event": "database_up"})
            else:
                log.error(
                    "database unreachable: %s",
                    error,
                    extra={"event": "database_down", "error": error},
                )
        self.metrics.database_up.set(1 if ok else 0)

    def _ensure_seeded(self) -> None:
        """Load each job's last success/failure from ``collection_runs`` (once)."""
        if self._seeded:
            return
        stmt = (
            select(
                CollectionRun.provider,
                CollectionRun.scope,
                CollectionRun.status,
                func.max(CollectionRun.started_at),
                func.max(CollectionRun.finished_at),
            )
            .where(CollectionRun.status.in_(("succeeded", "failed")))
            .group_by(CollectionRun.provider, CollectionRun.scope, CollectionRun.status)
        )
        with self.engine.connect() as conn:
            rows = conn.execute(stmt).all()
        latest: dict[tuple[str, str, str], tuple[datetime | None, datetime | None]] = {
            (r[0], r[1], r[2]): (_as_utc(r[3]), _as_utc(r[4])) for r in rows
        }
        for spec in self.jobs:
            # A manual full run (scope "all") also refreshed this job's prices.
            labels = (scope_label(spec.pricing_scope), "all")
            ok = [latest.get((spec.collector, lb, "succeeded"), (None, None)) for lb in labels]
            bad = [latest.get((spec.collector, lb, "failed"), (None, None)) for lb in labels]
            self.health.seed(
                spec.id,
                last_success=max((f for _, f in ok if f), default=None),
                last_success_started=max((s for s, _ in ok if s), default=None),
                last_failure=max((f for _, f in bad if f), default=None),
            )
            success = self.health.jobs[spec.id].last_success
            if success is not None:
                self.metrics.last_success.labels(spec.collector, spec.scope).set(
                    success.timestamp()
                )
        self._seeded = True

    # -- one job ---------------------------------------------------------------------

    @contextmanager
    def _in_flight(self, spec: JobSpec) -> Iterator[None]:
        with self._running_cond:
            self._running[spec.id] = utcnow()
        try:
            yield
        finally:
            with self._running_cond:
                self._running.pop(spec.id, None)
                self._running_cond.notify_all()

    def run_job(self, spec: JobSpec) -> JobOutcome:
        """One attempt of ``spec``: lock, run, record, hooks. Never raises."""
        if self._stopping.is_set():
            return JobOutcome(spec, "skipped", reason="stopping")
        began = time.monotonic()
        with self._in_flight(spec):
            try:
                outcome = self._locked_run(spec)
            except (SQLAlchemyError, DatabaseError) as exc:
                self._database_state(False, one_line(exc))
                outcome = JobOutcome(spec, "failed", reason="database", error=one_line(exc))
            except Exception as exc:  # a bug in the service or the runner: keep serving
                log.exception("%s: job crashed", spec.id)
                outcome = JobOutcome(spec, "failed", reason="collector", error=one_line(exc))
            self._record(outcome, time.monotonic() - began)
        if outcome.status == "succeeded" and outcome.summary is not None:
            self._run_hooks(spec, outcome.summary)
        return outcome

    def _locked_run(self, spec: JobSpec) -> JobOutcome:
        with self.locks.hold(spec.id) as held:
            if not held:
                log.info(
                    "%s: skipped: another runner holds this job",
                    spec.id,
                    extra={"event": "run_locked", "collector": spec.collector, "scope": spec.scope},
                )
                self.metrics.skips.labels(spec.collector, spec.scope, "locked").inc()
                return JobOutcome(spec, "locked")
            self._ensure_seeded()
            self._database_state(True)
            self.health.started(spec.id, utcnow())
            try:
                collector = self.collectors[spec.collector].from_settings(self.settings)
            except NotConfigured as exc:  # MissingCredentials too
                self.metrics.skips.labels(spec.collector, spec.scope, "not_configured").inc()
                summary = RunSummary(
                    spec.collector, RunStatus.SKIPPED, scope=spec.scope, error=str(exc)
                )
                return JobOutcome(spec, "skipped", summary, error=str(exc))
            except Exception as exc:
                log.exception("%s: collector could not be created", spec.id)
                summary = RunSummary(
                    spec.collector, RunStatus.FAILED, scope=spec.scope, error=one_line(exc)
                )
                return JobOutcome(spec, "failed", summary, reason="collector", error=summary.error)
            summary = run_collector(
                self.engine, collector, self.settings, pricing_scope=spec.pricing_scope
            )
        if summary.status == "succeeded":
            self._database_state(True)
        if summary.status == "failed":
            # Mid-run database loss comes back as a failed summary; tell it apart
            # from a provider failure by asking the database directly.
            reason = "collector" if self.ping_database() else "database"
            return JobOutcome(spec, "failed", summary, reason=reason, error=summary.error)
        return JobOutcome(spec, summary.status, summary)

    def _record(self, outcome: JobOutcome, seconds: float) -> None:
        spec, summary = outcome.spec, outcome.summary
        if outcome.status == "locked" or outcome.reason == "stopping":
            return
        now = utcnow()
        started = summary.started_at if summary and summary.started_at else now
        labels = (spec.collector, spec.scope)
        self.health.finished(spec.id, outcome.status, now, outcome.error, started=started)
        self.metrics.runs.labels(*labels, outcome.status).inc()
        self.metrics.duration.labels(*labels).observe(seconds)
        if outcome.status == "failed":
            self.metrics.failures.labels(*labels, outcome.reason or "collector").inc()
        if outcome.status == "succeeded" and summary is not None:
            self.metrics.offers_seen.labels(*labels).inc(summary.stats.offers_seen)
            self.metrics.price_changes.labels(*labels).inc(summary.stats.price_changes)
            self.metrics.last_success.labels(*labels).set(now.timestamp())
            if self.health.jobs[spec.id].stale:
                self._set_stale(spec, False)
        fields: dict[str, Any] = {
            "event": "run",
            "collector": spec.collector,
            "scope": spec.scope,
            "status": outcome.status,
            "duration_seconds": round(seconds, 3),
        }
        if summary is not None:
            fields.update(
                run_id=summary.run_id,
                **summary.stats.run_counts(),
                skipped=summary.skipped,
                skip_reasons=summary.skip_reasons,
            )
        if outcome.reason:
            fields["reason"] = outcome.reason
        if outcome.error:
            fields["error"] = outcome.error
        counts = (
            f"{fields.get('offers_seen', 0)} offers, {fields.get('new_series', 0)} new, "
            f"{fields.get('price_changes', 0)} price changes, "
            f"{fields.get('delisted', 0)} delisted, "
            f"{fields.get('skipped', 0)} skipped"
        )
        level = logging.INFO if outcome.status != "failed" else logging.ERROR
        detail = f" ({outcome.reason}: {outcome.error})" if outcome.status == "failed" else ""
        log.log(
            level,
            "run %s %s in %.1fs: %s%s",
            spec.id,
            outcome.status,
            seconds,
            counts,
            detail,
            extra=fields,
        )

    def _run_hooks(self, spec: JobSpec, summary: RunSummary) -> None:
        with self._hooks_lock:  # one rankings recompute at a time per process
            for hook in list(self.post_run_hooks):
                name = getattr(hook, "__name__", repr(hook))
                try:
                    hook(self.engine, self.settings, summary)
                except Exception:
                    log.exception(
                        "post-run hook %s failed after the %s run",
                        name,
                        spec.id,
                        extra={"event": "hook_failed", "hook": name, "collector": spec.collector},
                    )

    # -- staleness -------------------------------------------------------------------

    def check_staleness(self) -> list[str]:
        """Raise ``stale`` events for jobs that just turned stale; returns stale job ids."""
        now = utcnow()
        try:
            self._ensure_seeded()
        except (SQLAlchemyError, DatabaseError) as exc:
            self._database_state(False, one_line(exc))
        stale = []
        for spec in self.jobs:
            job = self.health.jobs[spec.id]
            is_stale = self.health.is_stale(job, now)
            if is_stale:
                stale.append(spec.id)
            if is_stale != job.stale:
                self._set_stale(spec, is_stale)
        return stale

    def _set_stale(self, spec: JobSpec, stale: bool) -> None:
        job = self.health.jobs[spec.id]
        job.stale = stale
        self.metrics.stale.labels(spec.collector, spec.scope).set(1 if stale else 0)
        fields = {"collector": spec.collector, "scope": spec.scope}
        if not stale:
            log.info("%s is fresh again", spec.id, extra={"event": "fresh", **fields})
            return
        since = job.last_success.isoformat() if job.last_success else "never (since start)"
        log.warning(
            "%s is stale: no successful run for %.0f cadences (last success: %s)",
            spec.id,
            self.config.stale_after_cadences,
            since,
            extra={"event": "stale", "last_success": job.last_success, **fields},
        )
        for hook in list(self.stale_hooks):
            try:
                hook(spec, job.last_success)
            except Exception:
                log.exception("stale hook failed for %s", spec.id)

    # -- health endpoint -------------------------------------------------------------

    def health_report(self) -> tuple[bool, dict[str, Any]]:
        self.ping_database()
        return self.health.report(utcnow())

    # -- scheduling ------------------------------------------------------------------

    def _scheduled(self, spec: JobSpec) -> None:
        outcome = self.run_job(spec)
        retry = self.config.db_retry_seconds
        if outcome.reason == "database" and retry < spec.interval_seconds:
            self._schedule_retry(spec, retry)

    def _schedule_retry(self, spec: JobSpec, seconds: float) -> None:
        scheduler = self._scheduler
        if scheduler is None or self._stopping.is_set():
            return
        when = utcnow() + timedelta(seconds=seconds)
        log.info("%s: database failure, retrying at %s", spec.id, when.isoformat())
        scheduler.add_job(
            self._scheduled,
            DateTrigger(run_date=when, timezone=UTC),
            args=[spec],
            id=f"{spec.id}:db-retry",
            name=f"{spec.id} (database retry)",
            replace_existing=True,
        )

    def _first_run(self, spec: JobSpec, now: datetime) -> datetime:
        """Now, unless the job already succeeded within its cadence (a quick restart)."""
        last = self.health.jobs[spec.id].last_success_started
        if last is None:
            return now
        return max(now, last + timedelta(seconds=spec.interval_seconds))

    def start(self) -> None:
        """Start the scheduler and the health server (returns at once)."""
        try:
            self._ensure_seeded()
            self._database_state(True)
        except (SQLAlchemyError, DatabaseError) as exc:
            self._database_state(False, one_line(exc))
        # SQLite has one writer, and a WAL reader that tries to write after another
        # commit fails at once ("database is locked"): run its jobs one at a time.
        workers = self.config.max_workers if self.engine.dialect.name == "postgresql" else 1
        scheduler = BackgroundScheduler(
            timezone=UTC,
            executors={"default": ThreadPoolExecutor(max_workers=workers)},
            job_defaults={
                "coalesce": True,
                "max_instances": 1,
                "misfire_grace_time": self.config.misfire_grace_seconds,
            },
        )
        now = utcnow()
        for spec in self.jobs:
            jitter = min(float(self.config.jitter_seconds), spec.interval_seconds / 10)
            scheduler.add_job(
                self._scheduled,
                IntervalTrigger(seconds=spec.interval_seconds, jitter=jitter or None, timezone=UTC),
                args=[spec],
                id=spec.id,
                name=spec.id,
                next_run_time=self._first_run(spec, now),
            )
        if self.jobs:
            every = min(STALENESS_CHECK_MAX_SECONDS, min(s.interval_seconds for s in self.jobs) / 2)
            scheduler.add_job(
                self.check_staleness,
                IntervalTrigger(seconds=max(every, 0.5), timezone=UTC),
                id="staleness",
                name="staleness check",
            )
        else:
            log.warning("no collector to schedule (see the 'disabled' list in /healthz)")
        self._scheduler = scheduler
        if self.http_address:  # bind first: a taken port fails before any job runs
            self._server = HealthServer(
                self.http_address, self.health_report, self.metrics.render, CONTENT_TYPE
            )
            self._server.start()
        scheduler.start()
        log.info(
            "scheduler started: %s",
            ", ".join(f"{s.id} every {s.interval_seconds:g}s" for s in self.jobs) or "no jobs",
            extra={"event": "started", "jobs": [s.id for s in self.jobs]},
        )

    @property
    def health_url(self) -> str | None:
        return self._server.url if self._server is not None else None

    def stop(self, timeout: float | None = None) -> bool:
        """Stop taking jobs and wait up to ``timeout`` for running ones; True if all ended."""
        timeout = self.config.shutdown_timeout_seconds if timeout is None else timeout
        self._stopping.set()
        if self._scheduler is not None and self._scheduler.running:
            self._scheduler.shutdown(wait=False)
        deadline = time.monotonic() + timeout
        with self._running_cond:
            while self._running and (remaining := deadline - time.monotonic()) > 0:
                self._running_cond.wait(remaining)
            self.abandoned = sorted(self._running)
        if self._server is not None:
            self._server.stop()
            self._server = None
        if self.abandoned:
            log.warning(
                "still running after %.0fs: %s; exiting anyway, their transactions roll back",
                timeout,
                ", ".join(self.abandoned),
                extra={"event": "abandoned", "jobs": self.abandoned},
            )
            return False
        self.engine.dispose()
        log.info("stopped", extra={"event": "stopped"})
        return True

    def request_stop(self, signum: int | None = None, _frame: FrameType | None = None) -> None:
        if signum is not None:
            log.info("received %s: stopping", signal.Signals(signum).name)
        self._stop_requested.set()

    def run_forever(self) -> int:
        """Serve until SIGTERM/SIGINT (main thread only); returns the exit status."""
        for sig in (signal.SIGTERM, signal.SIGINT):
            signal.signal(sig, self.request_stop)
        self.start()
        while not self._stop_requested.wait(0.5):
            pass
        self.stop()
        return 0

    def due_jobs(self, now: datetime | None = None) -> list[JobSpec]:
        """Jobs whose last successful run started at least one cadence ago (or never).

        A tolerance of min(10% of the cadence, 60 s) lets a cron line with the same
        period as the cadence pick the job up every time despite clock slop.
        """
        now = now or utcnow()
        self._ensure_seeded()
        due = []
        for spec in self.jobs:
            last = self.health.jobs[spec.id].last_success_started
            slack = min(spec.interval_seconds * 0.1, 60.0)
            if last is None or (now - last).total_seconds() >= spec.interval_seconds - slack:
                due.append(spec)
        return due

    def run_once(self) -> int:
        """Run every due job once (for cron); 0 if none failed, 1 otherwise."""
        try:
            due = self.due_jobs()
        except (SQLAlchemyError, DatabaseError) as exc:
            log.error("database unreachable: %s", one_line(exc), extra={"event": "database_down"})
            return 1
        if not due:
            log.info("no job is due", extra={"event": "nothing_due"})
        outcomes = [self.run_job(spec) for spec in due]
        self.engine.dispose()
        return 1 if any(o.status == "failed" for o in outcomes) else 0
