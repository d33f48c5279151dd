"""What /healthz reports: database reachability and, per job, last outcomes and staleness.

State lives in memory, seeded at start from ``collection_runs`` so a restarted
service still knows when each job last succeeded (and a restart cannot hide a
collector that has been failing for days). A job that never succeeded is
measured from the service's start, or from when its collector became configured.

A collector whose credentials are missing is *not configured*: a choice (most teams
hold keys for a few providers), not a fault, so its jobs are never stale. A stale or
failing job is a fault of one source, told by /healthz, /metrics and the health
alerts; it never makes the service unready (/readyz asks only whether the service is
started and its database answers: :meth:`tracker.service.Service.readiness`).
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import datetime, timedelta
from typing import Any

from tracker.service.jobs import JobSpec

__all__ = ["HealthState", "JobHealth"]


@dataclass
class JobHealth:
    spec: JobSpec
    last_success: datetime | None = None
    last_success_started: datetime | None = None
    """When the last successful run started (what ``--once`` measures cadence from)."""
    last_failure: datetime | None = None
    last_error: str | None = None
    last_status: str | None = None
    consecutive_failures: int = 0
    running_since: datetime | None = None
    stale: bool = False
    """The flag as of the last staleness check (transitions raise events)."""
    not_configured: str | None = None
    """Why the collector cannot be built now (its credentials are missing); None when
    it can (or has not been asked yet)."""
    configured_since: datetime | None = None
    """When credentials missing before turned up: a job with no success is measured from
    then, not from the service's start."""

    def as_json(self, stale: bool) -> dict[str, Any]:
        return {
            "collector": self.spec.collector,
            "scope": self.spec.scope,
            "configured": self.not_configured is None,
            "interval_seconds": self.spec.interval_seconds,
            "last_success": _iso(self.last_success),
            "last_failure": _iso(self.last_failure),
            "last_status": self.last_status,
            "last_error": self.last_error,
            "consecutive_failures": self.consecutive_failures,
            "running_since": _iso(self.running_since),
            "stale": stale,
        }


def _later(a: datetime | None, b: datetime | None) -> datetime | None:
    if a is None or b is None:
        return a or b
    return max(a, b)


def _iso(value: datetime | None) -> str | None:
    return value.isoformat() if value is not None else None


@dataclass
class HealthState:
    started_at: datetime
    stale_after_cadences: float
    jobs: dict[str, JobHealth] = field(default_factory=dict)
    disabled: dict[str, str] = field(default_factory=dict)
    """Collectors not scheduled, with the reason (switched off, nothing to collect)."""
    database_ok: bool | None = None
    database_error: str | None = None
    sections: dict[str, Callable[[], dict[str, Any]]] = field(default_factory=dict)
    """More parts of the report by key, e.g. ``alerts`` (channel health); each is
    informational and never turns the verdict unhealthy on its own."""
    _lock: threading.Lock = field(default_factory=threading.Lock, repr=False)

    def add(self, spec: JobSpec) -> None:
        self.jobs[spec.id] = JobHealth(spec)

    def is_stale(self, job: JobHealth, now: datetime) -> bool:
        """No success for ``stale_after_cadences`` cadences; never for a job whose
        collector is not configured (nothing was expected of it)."""
        if job.not_configured is not None:
            return False
        since = job.last_success or job.configured_since or self.started_at
        budget = timedelta(seconds=job.spec.interval_seconds * self.stale_after_cadences)
        return now - since > budget

    def set_configured(self, job_id: str, reason: str | None, when: datetime) -> bool:
        """Record whether the job's collector can be built (``reason``: why not); returns
        True when that changed. Credentials turning up restart its staleness clock."""
        with self._lock:
            job = self.jobs[job_id]
            if (job.not_configured is None) == (reason is None):
                job.not_configured = reason  # the same state (maybe a new reason)
                return False
            if reason is None:
                job.configured_since = when
            job.not_configured = reason
            return True

    @property
    def not_configured(self) -> dict[str, str]:
        """Collector -> why it is not configured (its jobs share the reason)."""
        return {
            job.spec.collector: job.not_configured
            for job in self.jobs.values()
            if job.not_configured is not None
        }

    def set_database(self, ok: bool, error: str | None = None) -> bool:
        """Record a database contact; returns True when reachability changed."""
        with self._lock:
            changed = self.database_ok is not ok
            self.database_ok = ok
            self.database_error = None if ok else error
            return changed

    def started(self, job_id: str, when: datetime) -> None:
        with self._lock:
            self.jobs[job_id].running_since = when

    def finished(
        self,
        job_id: str,
        status: str,
        when: datetime,
        error: str | None = None,
        *,
        started: datetime | None = None,
    ) -> None:
        with self._lock:
            job = self.jobs[job_id]
            job.running_since = None
            job.last_status = status
            if status == "succeeded":
                job.last_success = when
                job.last_success_started = started or when
                job.consecutive_failures = 0
                job.last_error = None
            elif status == "failed":
                job.last_failure = when
                job.consecutive_failures += 1
                job.last_error = error
            elif status == "skipped":  # why nothing was collected (credentials missing)
                job.last_error = error

    def seed(
        self,
        job_id: str,
        *,
        last_success: datetime | None,
        last_success_started: datetime | None,
        last_failure: datetime | None,
    ) -> None:
        """Merge what the database knows (never moves a time backwards)."""
        with self._lock:
            job = self.jobs[job_id]
            job.last_success = _later(job.last_success, last_success)
            job.last_success_started = _later(job.last_success_started, last_success_started)
            job.last_failure = _later(job.last_failure, last_failure)

    def report(self, now: datetime) -> tuple[bool, dict[str, Any]]:
        """(healthy, body): healthy when the database is reachable and nothing is stale.

        ``stale`` and ``failing`` (the jobs whose latest run failed) name the sources at
        fault; ``not_configured`` the collectors that lack credentials, which are not."""
        with self._lock:
            jobs = {
                jid: job.as_json(self.is_stale(job, now)) for jid, job in sorted(self.jobs.items())
            }
            stale = sorted(jid for jid, body in jobs.items() if body["stale"])
            failing = sorted(jid for jid, job in self.jobs.items() if job.last_status == "failed")
            healthy = bool(self.database_ok) and not stale
            body = {
                "status": "ok" if healthy else "unhealthy",
                "time": now.isoformat(),
                "started_at": self.started_at.isoformat(),
                "database": {"reachable": bool(self.database_ok), "error": self.database_error},
                "stale": stale,
                "failing": failing,
                "collectors": jobs,
                "not_configured": dict(sorted(self.not_configured.items())),
                "disabled": dict(sorted(self.disabled.items())),
            }
        for key, section in self.sections.items():  # outside the lock: they may read state
            body[key] = section()
        return healthy, body
