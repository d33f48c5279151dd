"""One attempt of one job: lock it, check it is still due, run it, classify the outcome.

What each fault becomes (the reporter then tells health, metrics and the log):

* another runner holds the job → ``locked``, nothing attempted; the other's last
  success (read from the run log) is this replica's too, so it stays fresh;
* another runner (a replica, a manual ``collect``) already ran it within its
  cadence → ``not_due``: the advisory lock stops runs overlapping, this check
  stops them repeating, so N replicas make one run per cadence, not N;
* the collector's credentials are missing right now → ``skipped``: the job is *not
  configured* (never stale), asked again next cadence (a credentials hiccup at
  start-up never disables a provider for the life of the process); the run log gets
  one ``skipped`` row when credentials it had went missing, not one per cadence;
* the provider or the collector fails → ``failed`` (``collector``), recorded by
  the runner; its HTTP retries stop within :data:`RETRY_SHARE` of the cadence, so
  the run never overlaps the next; the next cadence tries again;
* the database is unreachable → ``failed`` (``database``), retried soon by the
  scheduler; the attempt (or the failure the run could not write) is written to the
  run log at the next attempt that reaches the database (``tracker.service.pending``).

Never raises: a bug in a collector or here is one failed run, the service carries on.
"""

from __future__ import annotations

import logging
import threading
import time
from collections import deque
from collections.abc import Callable, Iterator, Mapping
from contextlib import contextmanager
from datetime import datetime, timedelta

from collectors.base import Collector, NotConfigured, ServiceCollector
from collectors.deadline import retry_deadline
from tracker.collect import RunSummary, run_collector
from tracker.collect_services import SERVICES_SCOPE, run_service_collector
from tracker.errors import one_line
from tracker.models import RunStatus
from tracker.service import abandon
from tracker.service.jobs import JobSpec, run_scopes
from tracker.service.outcome import FailureReason, JobOutcome, JobStatus, SkipReason
from tracker.service.pending import PendingRuns
from tracker.service.report import Reporter, utcnow
from tracker.settings import Settings
from tracker.store import DatabaseError, Engine, JobLocks, runs

__all__ = ["JobRunner", "due_slack", "is_due"]

log = logging.getLogger(__name__)

RETRY_SHARE = 0.5
"""Share of a job's cadence its HTTP retries may take (``collectors.deadline.retry_deadline``):
a provider that is down is asked again next cadence, not hammered into it."""
OWN_RUNS_KEPT = 1024
"""Own run ids remembered: far more than the jobs of a service, times a few runs each."""
COLLECTION = abandon.COLLECTION
HOOKS = "after-collection hooks"


def due_slack(spec: JobSpec) -> timedelta:
    """Clock slop tolerated when asking whether a job is due: min(10 % of the cadence, 60 s).

    So a cron line with the same period as the cadence picks the job up every time.
    """
    return timedelta(seconds=min(spec.interval_seconds * 0.1, 60.0))


def is_due(spec: JobSpec, last_started: datetime | None, now: datetime) -> bool:
    """Whether a run that started at ``last_started`` leaves ``spec`` due again at ``now``."""
    if last_started is None:
        return True
    return now - last_started >= timedelta(seconds=spec.interval_seconds) - due_slack(spec)


class JobRunner:
    def __init__(
        self,
        settings: Settings,
        engine: Engine,
        collectors: Mapping[str, type[Collector]],
        locks: JobLocks,
        reporter: Reporter,
        before_run: Callable[[], None],
    ) -> None:
        self.settings = settings
        self.engine = engine
        self.collectors = collectors
        self.locks = locks
        self.reporter = reporter
        self._before_run = before_run
        """Called holding the lock, before anything else (seeds health from the run log)."""
        self.stopping = threading.Event()
        self._own_runs: deque[int] = deque(maxlen=OWN_RUNS_KEPT)
        """The latest run ids this process recorded: its own last run never makes a job
        not due. Bounded: a set of every run id would grow by one per run for months."""
        self.pending = PendingRuns(engine)
        """Attempts the run log has not seen yet (the database was down)."""
        self._running: dict[str, str] = {}
        """Job id → what it is doing (``collection`` or ``hooks``)."""
        self._running_cond = threading.Condition()

    @contextmanager
    def _in_flight(self, spec: JobSpec) -> Iterator[None]:
        self._phase(spec, COLLECTION)
        try:
            yield
        finally:
            with self._running_cond:
                self._running.pop(spec.id, None)
                self._running_cond.notify_all()

    def _phase(self, spec: JobSpec, phase: str) -> None:
        with self._running_cond:
            self._running[spec.id] = phase

    def wait_idle(self, timeout: float) -> dict[str, str]:
        """Wait up to ``timeout`` s for running jobs (their after-collection hooks
        included); returns what each job still running is doing, by id."""
        deadline = time.monotonic() + timeout
        with self._running_cond:
            while self._running and (remaining := deadline - time.monotonic()) > 0:
                self._running_cond.wait(remaining)
            return dict(sorted(self._running.items()))

    def run(self, spec: JobSpec) -> JobOutcome:
        """One attempt of ``spec``: lock, check, run, report, hooks. Never raises."""
        if self.stopping.is_set():
            return JobOutcome(spec, JobStatus.SKIPPED, reason=SkipReason.STOPPING)
        began, began_at = time.monotonic(), utcnow()
        # The hooks run in flight too: shutdown waits for them within its timeout.
        with self._in_flight(spec):
            try:
                outcome = self._locked_run(spec)
            except DatabaseError as exc:
                error = one_line(exc)
                self.reporter.database(False, error)
                self.pending.missed(spec, began_at, utcnow(), error)
                outcome = JobOutcome(
                    spec, JobStatus.FAILED, reason=FailureReason.DATABASE, error=error
                )
            except Exception as exc:  # a bug in the service or the runner: keep serving
                log.exception("%s: job crashed", spec.id)
                outcome = JobOutcome(
                    spec, JobStatus.FAILED, reason=FailureReason.COLLECTOR, error=one_line(exc)
                )
            self.reporter.record(outcome, time.monotonic() - began)
            if outcome.status is JobStatus.SUCCEEDED and outcome.summary is not None:
                self._phase(spec, HOOKS)
                self.reporter.after_collection(spec, outcome.summary)
        return outcome

    def _locked_run(self, spec: JobSpec) -> JobOutcome:
        with self.locks.hold(spec.id) as held:
            if self.pending:  # the database answers again: what it missed first
                self.pending.flush()
            if not held:
                # The holder is running it now; its last success is this replica's too.
                last = runs.last_success(self.engine, spec.collector, run_scopes(spec))
                if last is not None:
                    self.reporter.seen_success(spec, last)
                self.reporter.skipped(spec, SkipReason.LOCKED, "nothing attempted")
                return JobOutcome(spec, JobStatus.LOCKED, reason=SkipReason.LOCKED)
            self._before_run()
            self.reporter.database(True)
            elsewhere = self._ran_elsewhere(spec)
            if elsewhere is not None:
                self.reporter.ran_elsewhere(spec, elsewhere)
                return JobOutcome(spec, JobStatus.NOT_DUE, reason=SkipReason.NOT_DUE)
            self.reporter.started(spec)
            try:
                collector = self.collectors[spec.collector].from_settings(self.settings)
            except NotConfigured as exc:  # MissingCredentials: maybe back next cadence
                return self._skipped(spec, exc)
            except Exception as exc:
                log.exception("%s: collector could not be created", spec.id)
                summary = RunSummary(
                    spec.collector, RunStatus.FAILED, scope=spec.scope, error=one_line(exc)
                )
                return JobOutcome(
                    spec, JobStatus.FAILED, summary, FailureReason.COLLECTOR, summary.error
                )
            self.reporter.configured(spec, None)
            summary = self._collect(spec, collector)
            if summary.run_id is not None:
                self._own_runs.append(summary.run_id)
            if not summary.recorded:
                self.pending.unrecorded(spec, summary)
        if summary.status is RunStatus.SUCCEEDED:
            self.reporter.database(True)
            return JobOutcome(spec, JobStatus.SUCCEEDED, summary)
        # Mid-run database loss comes back as a failed summary; tell it apart from a
        # provider failure by the error, and by asking the database directly (a lost
        # connection fails the run while the server answers again at once).
        reachable = self.reporter.ping(self.engine)
        lost = summary.database_failed or not reachable
        reason = FailureReason.DATABASE if lost else FailureReason.COLLECTOR
        return JobOutcome(spec, JobStatus.FAILED, summary, reason, summary.error)

    def _collect(self, spec: JobSpec, collector: Collector) -> RunSummary:
        """The job's run: offers in its pricing scope, or the storage and egress prices."""
        with retry_deadline(spec.interval_seconds * RETRY_SHARE):
            if spec.scope == SERVICES_SCOPE and isinstance(collector, ServiceCollector):
                return run_service_collector(self.engine, collector, self.settings)
            return run_collector(
                self.engine,
                collector,
                self.settings,
                pricing_scope=spec.pricing_scope,
                label=spec.scope,
            )

    def _ran_elsewhere(self, spec: JobSpec) -> runs.SuccessfulRun | None:
        """The other runner's success that makes this cadence done already, if any."""
        last = runs.last_success(self.engine, spec.collector, run_scopes(spec))
        if last is None or last.id in self._own_runs:
            return None
        return None if is_due(spec, last.started_at, utcnow()) else last

    def _skipped(self, spec: JobSpec, exc: NotConfigured) -> JobOutcome:
        """A cadence whose collector cannot be built now: a ``skipped`` run row when it
        just became so (credentials it had went missing), none while it stays so."""
        reason = str(exc)
        now = utcnow()
        changed = self.reporter.configured(spec, reason)
        run_id = (
            runs.record_skipped_run(self.engine, spec.collector, spec.scope, reason, now)
            if changed
            else None
        )
        summary = RunSummary(
            spec.collector,
            RunStatus.SKIPPED,
            run_id=run_id,
            scope=spec.scope,
            error=reason,
            started_at=now,
            finished_at=now,
        )
        return JobOutcome(spec, JobStatus.SKIPPED, summary, SkipReason.NOT_CONFIGURED, reason)
