"""Where a job's outcome goes: health state, metrics, the log, and the hooks.

The runner decides what happened; this module is the one place that tells it,
so /healthz, /metrics and the ``event: run`` log line can never disagree about a
run, and staleness transitions reach the log, the gauge and the
``job_health_changed`` hooks together.
"""

from __future__ import annotations

import logging
from collections.abc import Sequence
from datetime import UTC, datetime
from typing import Any

from tracker.collect import RunSummary
from tracker.errors import one_line
from tracker.format import iso_z
from tracker.hooks import Hooks, JobHealthChange, Origin
from tracker.service.health import HealthState
from tracker.service.jobs import JobSpec, run_scopes
from tracker.service.metrics import Metrics
from tracker.service.outcome import JobOutcome, JobStatus, SkipReason
from tracker.settings import Settings
from tracker.store import DatabaseError, Engine
from tracker.store import ping as ping_database
from tracker.store.runs import LatestRuns, SuccessfulRun

__all__ = ["Reporter", "utcnow"]

log = logging.getLogger(__name__)


def utcnow() -> datetime:
    return datetime.now(UTC)


class Reporter:
    def __init__(
        self,
        settings: Settings,
        engine: Engine,
        health: HealthState,
        metrics: Metrics,
        hooks: Hooks,
    ) -> None:
        self.settings = settings
        self.engine = engine
        self.health = health
        self.metrics = metrics
        self.hooks = hooks

    # -- the database ------------------------------------------------------------------

    def database(self, ok: bool, error: str | None = None) -> None:
        if self.health.set_database(ok, error):
            if ok:
                log.info("database reachable", extra={"event": "database_up"})
            else:  # a state, not a run: each run it fails has its own ERROR line
                log.warning(
                    "database unreachable: %s",
                    error,
                    extra={"event": "database_down", "error": error},
                )
        self.metrics.database_up.set(1 if ok else 0)

    def ping(self, engine: Engine) -> bool:
        """Whether ``engine``'s database answers now (and tell it if that changed)."""
        try:
            ping_database(engine)
        except DatabaseError as exc:
            self.database(False, one_line(exc))
            return False
        self.database(True)
        return True

    def seed(self, jobs: Sequence[JobSpec], latest: LatestRuns) -> None:
        """Each job's last success/failure as the run log knows it."""
        for spec in jobs:
            # A manual full run (scope "all") also refreshed this job's prices.
            labels = run_scopes(spec)
            ok = [latest.get((spec.collector, lb, "succeeded"), (None, None)) for lb in labels]
            bad = [latest.get((spec.collector, lb, "failed"), (None, None)) for lb in labels]
            self.health.seed(
                spec.id,
                last_success=max((f for _, f in ok if f), default=None),
                last_success_started=max((s for s, _ in ok if s), default=None),
                last_failure=max((f for _, f in bad if f), default=None),
            )
            self._last_success_gauge(spec)

    def ran_elsewhere(self, spec: JobSpec, run: SuccessfulRun) -> None:
        """Another runner served this cadence: its success is this replica's too."""
        self.seen_success(spec, run)
        self.skipped(spec, SkipReason.NOT_DUE, f"run {run.id} started {iso_z(run.started_at)}")

    def seen_success(self, spec: JobSpec, run: SuccessfulRun) -> None:
        """A success of ``spec`` read from the run log (another runner's, maybe): the job
        is as fresh as that run, here too."""
        self.health.seed(
            spec.id,
            last_success=run.finished_at or run.started_at,
            last_success_started=run.started_at,
            last_failure=None,
        )
        self._last_success_gauge(spec)
        job = self.health.jobs[spec.id]
        if job.stale and not self.health.is_stale(job, utcnow()):
            self._set_stale(spec, False)

    def _last_success_gauge(self, spec: JobSpec) -> None:
        success = self.health.jobs[spec.id].last_success
        if success is not None:
            self.metrics.last_success.labels(spec.collector, spec.scope).set(success.timestamp())

    # -- one outcome ---------------------------------------------------------------------

    def started(self, spec: JobSpec) -> None:
        self.health.started(spec.id, utcnow())

    def configured(self, spec: JobSpec, missing: str | None) -> bool:
        """Whether the job's collector could be built this cadence (``missing``: why
        not); returns True when that changed, told in one INFO line. Never a warning:
        a provider the team holds no key for is a choice, not a fault."""
        changed = self.health.set_configured(spec.id, missing, utcnow())
        self.metrics.configured.labels(spec.collector).set(0 if missing else 1)
        if not changed:
            return False
        fields = {"collector": spec.collector, "scope": spec.scope}
        if missing is None:
            log.info(
                "%s: configured now (its credentials turned up): collecting",
                spec.id,
                extra={"event": "configured", **fields},
            )
        else:
            log.info(
                "%s: not configured now (%s); checked again each cadence",
                spec.id,
                missing,
                extra={"event": "not_configured", "reason": missing, **fields},
            )
            if self.health.jobs[spec.id].stale:  # a job nothing is expected of
                self._set_stale(spec, False)
        return True

    def skipped(self, spec: JobSpec, reason: SkipReason, detail: str) -> None:
        """A cadence this runner did not collect, for a reason that is not a run."""
        messages = {
            SkipReason.LOCKED: "another runner holds this job",
            SkipReason.NOT_DUE: "another runner ran it within its cadence",
        }
        log.info(
            "%s: skipped: %s (%s)",
            spec.id,
            messages.get(reason, reason.value),
            detail,
            extra={
                "event": f"run_{reason.value}",
                "collector": spec.collector,
                "scope": spec.scope,
            },
        )
        self.metrics.skips.labels(spec.collector, spec.scope, reason).inc()

    def record(self, outcome: JobOutcome, seconds: float) -> None:
        """Health, metrics and the ``event: run`` log line of a run."""
        if not outcome.is_run:
            return
        spec, summary = outcome.spec, outcome.summary
        now = utcnow()
        started = summary.started_at if summary and summary.started_at else now
        labels = (spec.collector, spec.scope)
        self.health.finished(spec.id, outcome.status, now, outcome.error, started=started)
        streak = self.health.jobs[spec.id].consecutive_failures
        self.metrics.consecutive_failures.labels(*labels).set(streak)
        self.metrics.runs.labels(*labels, outcome.status).inc()
        self.metrics.duration.labels(*labels).observe(seconds)
        if outcome.status is JobStatus.FAILED and outcome.reason is not None:
            self.metrics.failures.labels(*labels, outcome.reason).inc()
        if outcome.status is JobStatus.SKIPPED and outcome.reason is not None:
            self.metrics.skips.labels(*labels, outcome.reason).inc()
        if outcome.status is JobStatus.SUCCEEDED and summary is not None:
            self.metrics.offers_seen.labels(*labels).inc(summary.stats.offers_seen)
            self.metrics.price_changes.labels(*labels).inc(summary.stats.price_changes)
            self.metrics.last_success.labels(*labels).set(now.timestamp())
            if self.health.jobs[spec.id].stale:
                self._set_stale(spec, False)
        self._log_run(outcome, seconds, streak)

    def _log_run(self, outcome: JobOutcome, seconds: float, streak: int = 0) -> None:
        """The one line of a run: its counts, or why it failed or collected nothing.

        A failed run is one ERROR line (never a traceback: the error is one line, and
        the run log keeps it) saying how many runs in a row failed; a cadence skipped
        for want of credentials is DEBUG (the change was told once, at INFO)."""
        spec, summary = outcome.spec, outcome.summary
        fields: dict[str, Any] = {
            "event": "run",
            "collector": spec.collector,
            "scope": spec.scope,
            "status": outcome.status.value,
            "duration_seconds": round(seconds, 3),
            "run_id": summary.run_id if summary is not None else None,
        }
        if outcome.reason:
            fields["reason"] = outcome.reason.value
        if outcome.error:
            fields["error"] = outcome.error
        run = f"run {fields['run_id']}" if fields["run_id"] is not None else "run (not recorded)"
        head = f"{run} {spec.id} {outcome.status.value} in {seconds:.1f}s"
        if outcome.status is JobStatus.FAILED:
            fields["consecutive_failures"] = streak
            head += f" ({_ordinal(streak)} in a row)" if streak > 1 else ""
        if outcome.status is JobStatus.SUCCEEDED and summary is not None:
            fields.update(
                **summary.stats.run_counts(),
                skipped=summary.skipped,
                skip_reasons=summary.skip_reasons,
            )
            counts = summary.stats.run_counts()
            message = (
                f"{head}: {counts.get('offers_seen', 0)} offers, "
                f"{counts.get('new_series', 0)} new, "
                f"{counts.get('price_changes', 0)} price changes, "
                f"{counts.get('delisted', 0)} delisted, {summary.skipped} skipped"
            )
        else:
            why = outcome.reason.value if outcome.reason else "no reason given"
            message = f"{head}: {why}: {outcome.error or 'no error text'}"
        levels = {JobStatus.FAILED: logging.ERROR, JobStatus.SKIPPED: logging.DEBUG}
        log.log(levels.get(outcome.status, logging.INFO), "%s", message, extra=fields)

    def after_collection(self, spec: JobSpec, summary: RunSummary) -> None:
        self.hooks.after_collection(
            self.engine, self.settings, [summary], Origin.SERVE, context=f"the {spec.id} run"
        )

    # -- staleness -----------------------------------------------------------------------

    def check_staleness(self, jobs: Sequence[JobSpec], now: datetime) -> list[str]:
        """Tell the jobs that just turned stale or fresh; returns the stale job ids."""
        stale = []
        for spec in jobs:
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
        else:
            since = job.last_success.isoformat() if job.last_success else "never (since start)"
            log.warning(
                "%s is stale: no successful run for %.0f cadences (last success: %s)",
                spec.id,
                self.health.stale_after_cadences,
                since,
                extra={"event": "stale", "last_success": job.last_success, **fields},
            )
        change = JobHealthChange(
            job_id=spec.id,
            collector=spec.collector,
            scope=spec.scope,
            stale=stale,
            last_success=job.last_success,
            at=utcnow(),
        )
        self.hooks.job_health_changed(self.engine, self.settings, change)


def _ordinal(n: int) -> str:
    """2nd, 3rd, 11th, 21st: how the failure line counts a streak."""
    suffix = "th" if 10 <= n % 100 <= 20 else {1: "st", 2: "nd", 3: "rd"}.get(n % 10, "th")
    return f"{n}{suffix}"
