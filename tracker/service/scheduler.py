"""``gpu-tracker serve``: every collector on its cadence, surviving what months bring.

This module wires the parts together and owns time: APScheduler triggers, the
database retry, the start-up seeding, signals and shutdown. Running one job is
``runner``'s business, telling its outcome ``report``'s.

Fault model, and where each fault is handled:

* provider errors (5xx, 429, timeouts, refused connections, names that do not
  resolve) are retried by ``collectors.http`` within half the job's cadence, so a
  run never overlaps the next; a run that still fails is recorded failed by the
  runner (one ERROR line, no traceback) and the next cadence tries again. A failed
  run leaves nothing behind (no client, no traceback), so months of them cost no
  memory;
* missing credentials (at start or later) never unschedule a collector and never
  make it stale: it is *not configured* (one INFO line at start, /healthz, /metrics'
  ``gpu_tracker_collector_configured``), each cadence asks again quietly, and one
  ``skipped`` run is recorded when credentials it had go missing;
* readiness (/readyz) is "can serve": started and the database answers. A stale or
  failing job is one source's fault: /healthz names it, /metrics counts it, the
  collector-health alerts tell it; it never takes the instance out of service;
* the database going away (at start or mid-run) never leaves a partial run (the
  runner's single transaction) and never stops the service: the job is recorded
  failed in memory, /readyz and /healthz turn 503, and the job is retried after
  ``db_retry_seconds`` instead of a whole cadence later;
* a collector raising anything is one failed run; jobs are isolated;
* several replicas on one Postgres: an advisory lock per job keeps runs from
  overlapping, and the lock holder skips a job another runner already ran within
  its cadence, so each cadence is collected once (neither writes a run row); a
  replica that skips takes the other's success from the run log, so both stay
  ready, and each replica's first run falls at a random point of the half cadence
  after the job is due, so replicas do not fire in step;
* a process killed mid-run leaves its row ``running``: the next start of any
  instance marks it ``abandoned`` (on Postgres, once no one holds the job's lock);
* SIGTERM/SIGINT: no new runs start; a running one (after-collection hooks
  included) gets ``shutdown_timeout_seconds`` to finish; what is still running then
  is named in one line, its run row marked abandoned, and the process exits 0.
"""

from __future__ import annotations

import logging
import random
import signal
import threading
from collections.abc import Callable, Mapping
from contextlib import suppress
from datetime import UTC, datetime, timedelta
from types import FrameType
from typing import Any

from apscheduler.executors.pool import ThreadPoolExecutor
from apscheduler.jobstores.base import JobLookupError
from apscheduler.schedulers.background import BackgroundScheduler
from apscheduler.triggers.date import DateTrigger
from apscheduler.triggers.interval import IntervalTrigger

from collectors.base import Collector
from tracker import registry
from tracker.alerts.stats import STATS
from tracker.errors import one_line
from tracker.hooks import Hooks, load_hooks
from tracker.service import abandon
from tracker.service.alerting import Alerting
from tracker.service.health import HealthState
from tracker.service.jobs import JobSpec, plan_jobs, run_scopes
from tracker.service.metrics import CONTENT_TYPE, Metrics
from tracker.service.outcome import FailureReason, JobOutcome, JobStatus
from tracker.service.report import Reporter, utcnow
from tracker.service.runner import JobRunner, is_due
from tracker.service.web import Response, WebServer, json_response, parse_address, probe_app
from tracker.settings import Settings
from tracker.store import DatabaseError, Engine, JobLocks, locks_for, make_engine, runs

__all__ = ["JobOutcome", "Service"]

log = logging.getLogger(__name__)

STALENESS_CHECK_MAX_SECONDS = 60.0


class Service:
    """The scheduler, its health state and metrics; one instance per process."""

    def __init__(
        self,
        settings: Settings,
        *,
        engine: Engine | None = None,
        collectors: Mapping[str, type[Collector]] | None = None,
        http: str | None = None,
        hooks: Hooks | None = None,
        http_app: Callable[[Service], Any] | None = None,
    ) -> None:
        """``hooks`` defaults to the installed ``gpu_tracker.hooks`` plugins; ``http_app``
        builds what the HTTP server serves (``serve`` passes the dashboard with the
        probes, :func:`tracker.serving.service_app`); without it, the probes alone."""
        self.settings = settings
        self._http_app = http_app
        self.config = settings.scheduler
        self.engine = engine if engine is not None else make_engine(settings.database_url)
        self._probe = runs.probe_engine(self.engine, self.config.health_db_timeout_seconds)
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
        self.hooks = hooks if hooks is not None else load_hooks()
        self.alerting = Alerting.load(settings, self.engine)  # a bad rules file stops here
        if self.alerting.active:
            self.metrics.watch_alerts(STATS, self.alerting.backlog)
            self.health.sections["alerts"] = self.alerting.health
        self.jobs = self._plan()
        self.reporter = Reporter(settings, self.engine, self.health, self.metrics, self.hooks)
        self.locks: JobLocks = locks_for(self.engine)
        self.runner = JobRunner(
            settings,
            self.engine,
            self.collectors,
            self.locks,
            self.reporter,
            before_run=self._ensure_seeded,
        )
        self._seeded = False
        self._stop_requested = threading.Event()
        self._scheduler: BackgroundScheduler | None = None
        self._server: WebServer | None = None
        self.abandoned: list[str] = []
        """Jobs still running when shutdown timed out (their transactions roll back)."""
        self._rng = random.Random()

    # -- setup -------------------------------------------------------------------

    def _plan(self) -> list[JobSpec]:
        specs = plan_jobs(self.collectors, self.config, self.config.collectors)
        usable = []
        # Asked once per collector, not once per job: (switched off, credentials missing).
        reasons: dict[str, tuple[str | None, str | None]] = {}
        for spec in specs:
            if spec.collector not in reasons:
                reasons[spec.collector] = self._unusable(spec.collector)
            off, missing = reasons[spec.collector]
            if off is not None:
                self.health.disabled[spec.collector] = off
                continue
            usable.append(spec)
            self.health.add(spec)
            self.metrics.declare(spec.collector, spec.scope)
            if missing is not None:
                self.health.set_configured(spec.id, missing, self.health.started_at)
                self.metrics.configured.labels(spec.collector).set(0)
        # Switched off or with nothing to do is how most installs run most collectors:
        # one line says what runs and what does not (the reasons: /healthz "disabled").
        disabled = dict(sorted(self.health.disabled.items()))
        log.info(
            "scheduled: %s; disabled: %s",
            ", ".join(sorted({s.collector for s in usable})) or "nothing",
            ", ".join(disabled) or "none",
            extra={"event": "collectors_planned", "disabled": disabled},
        )
        unconfigured = dict(sorted(self.health.not_configured.items()))
        if unconfigured:
            # Told once, at INFO: most teams hold keys for a few providers only. Each
            # cadence checks again (quietly), so credentials that turn up are used.
            log.info(
                "not configured (credentials missing; checked again each cadence, never stale): %s",
                "; ".join(f"{name}: {why}" for name, why in unconfigured.items()),
                extra={"event": "collectors_not_configured", "not_configured": unconfigured},
            )
        return usable

    def _unusable(self, name: str) -> tuple[str | None, str | None]:
        """(why ``name`` is not scheduled at all, why it is not configured now):
        :func:`tracker.registry.unusable`."""
        return registry.unusable(self.settings, name, self.collectors[name])

    # -- database contact ----------------------------------------------------------

    def ping_database(self) -> bool:
        return self.reporter.ping(self._probe)

    def _ensure_seeded(self) -> None:
        """Load each job's last success/failure from ``collection_runs`` (once)."""
        if self._seeded:
            return
        self.reporter.seed(self.jobs, runs.latest_runs(self.engine))
        self._seeded = True

    # -- one job ---------------------------------------------------------------------

    def run_job(self, spec: JobSpec) -> JobOutcome:
        """One attempt of ``spec`` (see :mod:`tracker.service.runner`). Never raises.

        A failed run is recorded by then: its collector-health alerts go out now, not
        at the sender's next tick (which may be after the recovery)."""
        outcome = self.runner.run(spec)
        if outcome.status is JobStatus.FAILED and self.alerting.active:
            self.alerting.tick()
        return outcome

    def check_staleness(self) -> list[str]:
        """Tell jobs that just turned stale or fresh; returns the stale job ids."""
        try:
            self._ensure_seeded()
            self._refresh_before_stale(utcnow())
        except DatabaseError as exc:
            self.reporter.database(False, one_line(exc))
        return self.reporter.check_staleness(self.jobs, utcnow())

    def _refresh_before_stale(self, now: datetime) -> None:
        """Before a job is declared stale, ask the run log: another replica may have
        collected it (this one found the job not due, or locked, or never tried)."""
        for spec in self.jobs:
            job = self.health.jobs[spec.id]
            if not job.stale and self.health.is_stale(job, now):
                last = runs.last_success(self.engine, spec.collector, run_scopes(spec))
                if last is not None:
                    self.reporter.seen_success(spec, last)

    def abandon_orphans(self) -> int:
        """Mark ``abandoned`` the runs a dead process left ``running`` (at start-up)."""
        return abandon.orphans(self.engine, self.locks)

    # -- health endpoints ------------------------------------------------------------

    def health_report(self) -> tuple[bool, dict[str, Any]]:
        """/healthz: the database is reachable and no job is stale, with every detail."""
        if self.ping_database():
            with suppress(DatabaseError):  # reported by the ping already, if it persists
                self._refresh_before_stale(utcnow())
        return self.health.report(utcnow())

    def liveness(self) -> tuple[bool, dict[str, Any]]:
        """/livez: the process schedules jobs (no database or provider is asked)."""
        scheduler = self._scheduler
        alive = scheduler is not None and scheduler.running
        body = {
            "status": "ok" if alive else "down",
            "started_at": self.health.started_at.isoformat(),
            "jobs": len(self.jobs),
        }
        return alive, body

    def readiness(self) -> tuple[bool, dict[str, Any]]:
        """/readyz: whether this instance can serve: it is started and its database
        answers. A provider failing, stale or not configured is not a reason to take
        the instance (and every replica like it) out of service: the dashboard, the API
        and the alerts still serve what is stored. /healthz names such sources."""
        scheduler = self._scheduler
        started = scheduler is not None and scheduler.running
        database = self.ping_database()
        ready = started and database
        body = {
            "status": "ok" if ready else "unavailable",
            "time": utcnow().isoformat(),
            "started": started,
            "database": {"reachable": database, "error": self.health.database_error},
        }
        return ready, body

    def _routes(self) -> dict[str, Any]:
        def metrics() -> Response:
            return 200, CONTENT_TYPE, self.metrics.render()

        return {
            "/livez": json_response(self.liveness),
            "/readyz": json_response(self.readiness),
            "/healthz": json_response(self.health_report),
            "/health": json_response(self.health_report),
            "/metrics": metrics,
        }

    def probe_routes(self) -> dict[str, Any]:
        """/livez, /readyz, /healthz, /health and /metrics, for whatever app serves them."""
        return self._routes()

    def http_app(self) -> Any:
        """What the HTTP server serves: ``http_app``'s app, or the probes alone."""
        if self._http_app is None:
            return probe_app(self._routes())
        return self._http_app(self)

    # -- scheduling ------------------------------------------------------------------

    def _scheduled(self, spec: JobSpec) -> None:
        outcome = self.run_job(spec)
        retry = self.config.db_retry_seconds
        scheduler = self._scheduler
        if outcome.reason is FailureReason.DATABASE and retry < spec.interval_seconds:
            self._schedule_retry(spec, retry)
        elif outcome.status is JobStatus.LOCKED and scheduler and not self.runner.stopping.is_set():
            # In step with another replica, this one would find the job locked every
            # cadence and know only the other's previous success. Moved by a random
            # quarter to three quarters of a cadence, it finds the run done (not due).
            shift = timedelta(seconds=self._rng.uniform(0.25, 0.75) * spec.interval_seconds)
            with suppress(JobLookupError):
                scheduler.modify_job(spec.id, next_run_time=utcnow() + shift)

    def _schedule_retry(self, spec: JobSpec, seconds: float) -> None:
        scheduler = self._scheduler
        if scheduler is None or self.runner.stopping.is_set():
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
        """Now, unless the job already succeeded within its cadence (a quick restart, or
        another replica running it): then a random point of the half cadence after it
        is due, so two replicas do not fire in step (one finding the other's run in
        progress every time), and a restart is never more than 1.5 cadences late."""
        last = self.health.jobs[spec.id].last_success_started
        cadence = timedelta(seconds=spec.interval_seconds)
        if last is None or last + cadence <= now:
            return now
        return last + cadence + self._rng.uniform(0, 0.5) * cadence

    def start(self) -> None:
        """Start the scheduler and the health server (returns at once)."""
        try:
            self._ensure_seeded()
            self.abandon_orphans()
            self.reporter.database(True)
        except DatabaseError as exc:
            self.reporter.database(False, one_line(exc))
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
        if self.alerting.active:
            scheduler.add_job(
                self.alerting.tick,
                IntervalTrigger(seconds=self.alerting.interval_seconds, timezone=UTC),
                id="alerts",
                name="alert sender",
                next_run_time=now,
            )
        self._scheduler = scheduler
        if self.http_address:  # bind first: a taken port fails before any job runs
            self._server = WebServer(self.http_address, self.http_app())
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
        """Stop taking jobs and wait up to ``timeout`` for running ones (their hooks
        included); True if all ended. What is still running is named in one line and
        its run row marked abandoned (its transaction rolls back when the process ends)."""
        timeout = self.config.shutdown_timeout_seconds if timeout is None else timeout
        self.runner.stopping.set()
        if self._scheduler is not None and self._scheduler.running:
            self._scheduler.shutdown(wait=False)
        running = self.runner.wait_idle(timeout)
        self.abandoned = list(running)
        if self._server is not None:
            self._server.stop()
            self._server = None
        if running:
            self._abandon_running(running, timeout)
            return False
        self.engine.dispose()
        log.info("stopped", extra={"event": "stopped"})
        return True

    def _abandon_running(self, running: dict[str, str], timeout: float) -> None:
        limit = f"shutdown_timeout_seconds = {timeout:g} s"
        what = abandon.unfinished(self.engine, self.jobs, running, limit)
        log.warning(
            "still running after %s: %s; exiting anyway",
            limit,
            "; ".join(f"{job}: {text}" for job, text in what.items()),
            extra={"event": "abandoned", "jobs": list(running), "phases": running},
        )

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

    # -- cron ------------------------------------------------------------------------

    def due_jobs(self, now: datetime | None = None) -> list[JobSpec]:
        """Jobs whose last successful run started at least one cadence ago (or never)."""
        now = now or utcnow()
        self._ensure_seeded()
        return [
            spec
            for spec in self.jobs
            if is_due(spec, self.health.jobs[spec.id].last_success_started, now)
        ]

    def run_once(self) -> int:
        """Run every due job once (for cron); 0 if none failed, 1 otherwise."""
        try:
            due = self.due_jobs()
            self.abandon_orphans()  # a cron start is a start too
        except DatabaseError as exc:
            log.error("database unreachable: %s", one_line(exc), extra={"event": "database_down"})
            return 1
        if not due:
            log.info("no job is due", extra={"event": "nothing_due"})
        outcomes = [self.run_job(spec) for spec in due]
        self.engine.dispose()
        return 1 if any(o.status is JobStatus.FAILED for o in outcomes) else 0
